#include "coordinator/advisor.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// batch 64, step 62 ms → 1,032 samples/s demanded by one rank.
AdvisorInput OneRank(double wait_fraction, std::vector<WorkerSupply> workers) {
  AdvisorInput input;
  input.batch_size = 64;
  input.ranks = {RankDemand{0, wait_fraction, 0.062}};
  input.workers = std::move(workers);
  return input;
}

TEST(AdvisorTest, TooFewBusyWorkersAsksForMore) {
  // Three workers at 95% busy each deliver ~203 samples/s: capacity ~214 a worker.
  const Advice advice =
      AdviseWorkers(OneRank(0.41, {{1, 203, 0.95, ""}, {2, 203, 0.95, ""}, {3, 204, 0.95, ""}}));
  ASSERT_TRUE(advice.measured);
  EXPECT_EQ(advice.workers_now, 3u);
  // 1,032 × 1.1 / 214 = 5.3 → 6.
  EXPECT_EQ(advice.workers_desired, 6u);
  EXPECT_NEAR(advice.demand_samples_per_second, 1032.26, 0.01);
  EXPECT_NEAR(advice.supply_samples_per_second, 610, 1e-9);
  EXPECT_EQ(advice.explanation,
            "rank 0 waits 41% of its step; 3 workers at 95% busy supply 610 samples/s of 1,032 "
            "demanded (one worker can do 214): add 3");
}

TEST(AdvisorTest, IdleWorkersAskForFewer) {
  // Eight workers at 25% busy deliver 129 samples/s each: capacity 516 a worker.
  std::vector<WorkerSupply> workers;
  for (uint64_t id = 1; id <= 8; ++id) workers.push_back({id, 129, 0.25, ""});
  const Advice advice = AdviseWorkers(OneRank(0.0, workers));
  ASSERT_TRUE(advice.measured);
  // 1,032 × 1.1 / 516 = 2.2 → 3.
  EXPECT_EQ(advice.workers_desired, 3u);
  EXPECT_THAT(advice.explanation, HasSubstr("3 workers suffice, remove 5"));
}

TEST(AdvisorTest, BalancedKeeps) {
  const Advice advice = AdviseWorkers(OneRank(0.01, {{1, 520, 0.5, ""}, {2, 520, 0.5, ""}}));
  // Capacity 1,040 a worker; 1,032 × 1.1 / 1,040 = 1.09 → 2.
  EXPECT_EQ(advice.workers_desired, 2u);
  EXPECT_THAT(advice.explanation, HasSubstr(": keep 2"));
}

TEST(AdvisorTest, WaitingWithIdleWorkersPointsElsewhere) {
  // Capacity 1,040 a worker covers the demand, yet the rank waits 70%: not a worker shortage.
  const Advice advice = AdviseWorkers(OneRank(0.7, {{1, 260, 0.25, ""}, {2, 260, 0.25, ""}}));
  EXPECT_EQ(advice.workers_desired, 2u);
  EXPECT_THAT(advice.explanation, HasSubstr(": keep 2; the workers are mostly idle while the "
                                            "trainer waits, so the limit is elsewhere"));
  // Busy workers and a waiting rank: a plain shortage, no such remark.
  EXPECT_THAT(AdviseWorkers(OneRank(0.7, {{1, 260, 0.95, ""}})).explanation,
              Not(HasSubstr("elsewhere")));
}

TEST(AdvisorTest, DemandAddsUpOverRanks) {
  AdvisorInput input = OneRank(0.3, {{1, 500, 1.0, ""}});
  input.ranks.push_back(RankDemand{1, 0.6, 0.064});  // 1,000 samples/s more.
  const Advice advice = AdviseWorkers(input);
  EXPECT_NEAR(advice.demand_samples_per_second, 1032.26 + 1000, 0.01);
  EXPECT_EQ(advice.workers_desired, 5u);  // 2,032 × 1.1 / 500 = 4.47 → 5.
  EXPECT_THAT(advice.explanation, HasSubstr("rank 1 (most) waits 60% of its step"));
}

TEST(AdvisorTest, SaysWhatIsMissing) {
  AdvisorInput no_step = OneRank(0.5, {{1, 100, 0.9, ""}});
  no_step.ranks[0].step_seconds = 0;
  Advice advice = AdviseWorkers(no_step);
  EXPECT_FALSE(advice.measured);
  EXPECT_EQ(advice.workers_desired, 1u);
  EXPECT_THAT(advice.explanation, HasSubstr("step time"));

  advice = AdviseWorkers(OneRank(0.5, {}));
  EXPECT_FALSE(advice.measured);
  EXPECT_EQ(advice.workers_desired, 0u);
  EXPECT_THAT(advice.explanation, HasSubstr("no workers"));

  advice = AdviseWorkers(OneRank(0.5, {{1, 0, 0.0, ""}}));
  EXPECT_FALSE(advice.measured);
  EXPECT_THAT(advice.explanation, HasSubstr("waiting for a worker"));
}

// Workers busy on other jobs produced nothing for this one: no capacity to extrapolate (it was
// a division by zero, an infinity cast to uint32), and the advice says why.
TEST(AdvisorTest, WorkersBusyOnOtherJobsAreNotExtrapolated) {
  const Advice advice = AdviseWorkers(OneRank(0.9, {{1, 0, 0.95, ""}, {2, 0, 0.99, ""}}));
  EXPECT_FALSE(advice.measured);
  EXPECT_EQ(advice.workers_desired, 2u);
  EXPECT_THAT(advice.explanation, HasSubstr("they work for other jobs"));
}

// A worker that just moved from another job: 10 samples/s for this one, 190 for the other, at
// 100% busy. Its capacity is 200 (busy time shared by rate), not 10 (which asked for 100 workers
// at every job switch).
TEST(AdvisorTest, BusyTimeIsSharedAmongTheJobs) {
  WorkerSupply worker{1, 10, 1.0, ""};
  worker.all_jobs_samples_per_second = 200;
  const Advice advice = AdviseWorkers(OneRank(0.5, {worker}));
  ASSERT_TRUE(advice.measured);
  EXPECT_NEAR(advice.capacity_samples_per_second, 200, 1e-9);
  EXPECT_EQ(advice.workers_desired, 6u);  // 1,032 × 1.1 / 200 = 5.7 → 6
}

TEST(AdvisorTest, NeededWorkersAreCapped) {
  const Advice advice = AdviseWorkers(OneRank(0.9, {{1, 1e-12, 1.0, ""}}));
  ASSERT_TRUE(advice.measured);
  EXPECT_EQ(advice.workers_desired, kMaxWorkersDesired);
}

}  // namespace
}  // namespace stoker
