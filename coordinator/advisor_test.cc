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

// A worker inside another program (no process figure) whose producer thread ran 60% of the
// time but held a task all of it (it waited for a core of the host it shares) delivers 300
// samples/s and no more: capacity 300. Its CPU time alone (the model before) said 500, and 3.
TEST(AdvisorTest, ContendedWorkersAreExtrapolatedFromTheirWallTime) {
  WorkerSupply contended{1, 300, 0.6, ""};
  contended.occupied_fraction = 1.0;
  AdvisorConfig config;
  config.prices.gpu_node_dollars_per_hour = 1.408;
  config.prices.worker_dollars_per_hour = 0.816;
  AdvisorInput input = OneRank(0.7, {contended});
  input.samples_per_epoch = 1'032'000;
  const Advice advice = AdviseWorkers(input, config);
  ASSERT_TRUE(advice.measured);
  EXPECT_NEAR(advice.capacity_samples_per_second, 300, 1e-9);
  EXPECT_EQ(advice.workers_desired, 4u);  // 1,032 × 1.1 / 300 = 3.8 → 4
  EXPECT_THAT(advice.explanation,
              HasSubstr("1 worker at 100% busy supply 300 samples/s of 1,032 demanded (one "
                        "worker can do 300): add 3"));
  // The cost model extrapolates the same capacity: the knee is ceil(1,032 / 300) = 4, and 3
  // workers (900 samples/s at $3.856/h: $0.00428 per thousand samples) are cheaper than 4
  // (1,032 at $4.672/h: $0.00453).
  EXPECT_EQ(advice.cost.knee_workers, 4u);
  EXPECT_EQ(advice.cost.cheapest_workers, 3u);
  ASSERT_GE(advice.cost.by_workers.size(), 3u);
  EXPECT_EQ(advice.cost.by_workers[2].workers, 3u);
  EXPECT_NEAR(advice.cost.by_workers[2].samples_per_second, 900, 1e-9);
  // Not "mostly idle": the worker is fully used although its CPU time is 60%.
  EXPECT_THAT(advice.explanation, Not(HasSubstr("elsewhere")));
}

// A worker process using 80% of its CPUs while its producer threads are half busy: the gRPC
// threads sending its batches take the rest. Its CPUs run out at 400 / 0.8 = 500 samples/s,
// not at 400 / 0.5 = 800 (the model before: 2 workers, now 3).
TEST(AdvisorTest, AWorkersProcessCpuBoundsItsCapacity) {
  WorkerSupply worker{1, 400, 0.5, ""};
  worker.occupied_fraction = 0.5;
  worker.process_cpu_fraction = 0.8;
  const Advice advice = AdviseWorkers(OneRank(0.6, {worker}));
  ASSERT_TRUE(advice.measured);
  EXPECT_NEAR(advice.capacity_samples_per_second, 500, 1e-9);
  EXPECT_EQ(advice.workers_desired, 3u);  // 1,032 × 1.1 / 500 = 2.3 → 3
  EXPECT_EQ(advice.cost.knee_workers, 3u);
}

TEST(AdvisorTest, WorkerUseIsTheMostUsedResource) {
  WorkerSupply worker{1, 100, 0.3, ""};
  EXPECT_EQ(WorkerUse(worker), 0.3);
  worker.occupied_fraction = 0.45;
  EXPECT_EQ(WorkerUse(worker), 0.45);
  worker.process_cpu_fraction = 0.7;
  EXPECT_EQ(WorkerUse(worker), 0.7);
  // A worker in its own process: its wall time is not its use (see the next test).
  worker.occupied_fraction = 0.95;
  EXPECT_EQ(WorkerUse(worker), 0.7);
  // Reported figures are bounded like the rest: a NaN use counts as 0, above 1 as 1.
  worker.process_cpu_fraction = 7;
  EXPECT_NEAR(AdviseWorkers(OneRank(0.5, {worker})).capacity_samples_per_second, 100, 1e-9);
}

// Three worker processes sharing one host's cores: each holds a task all the time but runs
// 60% of it, its process at 35% of the host's CPUs. Each new worker brings CPUs of its own, so
// each is extrapolated by its CPU time: 120 / 0.6 = 200, 1,032 × 1.1 / 200 = 5.7 → 6. By its
// wall time (120 a worker: 10 workers) every worker added to the host would lower the figure
// and raise the count again.
TEST(AdvisorTest, WorkersInTheirOwnProcessAreNotExtrapolatedByWallTime) {
  std::vector<WorkerSupply> workers;
  for (uint64_t id = 1; id <= 3; ++id) {
    WorkerSupply worker{id, 120, 0.6, ""};
    worker.occupied_fraction = 1.0;
    worker.process_cpu_fraction = 0.35;
    workers.push_back(worker);
  }
  const Advice advice = AdviseWorkers(OneRank(0.6, workers));
  ASSERT_TRUE(advice.measured);
  EXPECT_NEAR(advice.capacity_samples_per_second, 600, 1e-9);
  EXPECT_EQ(advice.workers_desired, 6u);
}

TEST(AdvisorTest, NeededWorkersAreCapped) {
  const Advice advice = AdviseWorkers(OneRank(0.9, {{1, 1e-12, 1.0, ""}}));
  ASSERT_TRUE(advice.measured);
  EXPECT_EQ(advice.workers_desired, kMaxWorkersDesired);
}

}  // namespace
}  // namespace stoker
