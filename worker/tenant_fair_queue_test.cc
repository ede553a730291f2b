#include "worker/tenant_fair_queue.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace stoker {
namespace {

// A backlogged job of the fair queue tests: `cost` per task, always `kFairQueueBacklog` queued.
struct FairQueueJob {
  std::string tenant;
  uint64_t job_id;
  absl::Duration cost;
  bool active = true;
};

constexpr int kFairQueueBacklog = 4;

// Runs `turns` tasks one at a time, keeping every active job backlogged; returns the producer
// seconds spent by tenant, and adds each job's to `by_job` when given.
std::map<std::string, double> RunFairQueue(TenantFairQueue* queue, std::vector<FairQueueJob>& jobs,
                                           const std::map<std::string, double>& weights, int turns,
                                           std::map<uint64_t, double>* by_job = nullptr) {
  std::map<uint64_t, int> queued;
  std::map<std::string, double> seconds;
  for (int turn = 0; turn < turns; ++turn) {
    for (const FairQueueJob& job : jobs) {
      for (; job.active && queued[job.job_id] < kFairQueueBacklog; ++queued[job.job_id]) {
        queue->Add(job.tenant, job.job_id, weights.at(job.tenant));
      }
    }
    std::optional<TenantFairQueue::Turn> next = queue->Next();
    if (!next.has_value()) continue;
    --queued[next->job_id];
    for (const FairQueueJob& job : jobs) {
      if (job.job_id != next->job_id) continue;
      queue->Done(*next, job.cost);
      seconds[job.tenant] += absl::ToDoubleSeconds(job.cost);
      if (by_job != nullptr) (*by_job)[job.job_id] += absl::ToDoubleSeconds(job.cost);
    }
  }
  return seconds;
}

// Tenant x: 8 jobs of 10 ms tasks; tenant y: 1 job of 30 ms tasks.
std::vector<FairQueueJob> EightJobsAgainstOne() {
  std::vector<FairQueueJob> jobs;
  for (uint64_t id = 1; id <= 8; ++id) jobs.push_back({"x", id, absl::Milliseconds(10)});
  jobs.push_back({"y", 100, absl::Milliseconds(30)});
  return jobs;
}

double FairQueueShare(const std::map<std::string, double>& seconds, const std::string& tenant) {
  double total = 0;
  for (const auto& [name, s] : seconds) total += s;
  return seconds.count(tenant) ? seconds.at(tenant) / total : 0;
}

TEST(TenantFairQueueTest, EqualWeightsSplitTimeByTenantNotByJob) {
  TenantFairQueue queue;
  std::vector<FairQueueJob> jobs = EightJobsAgainstOne();
  std::map<uint64_t, double> by_job;
  const auto seconds = RunFairQueue(&queue, jobs, {{"x", 1}, {"y", 1}}, 4000, &by_job);
  EXPECT_NEAR(FairQueueShare(seconds, "y"), 0.5, 0.02);
  // A tenant's jobs share its time equally.
  for (uint64_t id = 1; id <= 8; ++id) EXPECT_NEAR(by_job[id] / seconds.at("x"), 1.0 / 8, 0.01);
}

TEST(TenantFairQueueTest, WeightsThreeToOneGiveThreeQuarters) {
  TenantFairQueue queue;
  std::vector<FairQueueJob> jobs = EightJobsAgainstOne();
  const auto seconds = RunFairQueue(&queue, jobs, {{"x", 3}, {"y", 1}}, 4000);
  EXPECT_NEAR(FairQueueShare(seconds, "x"), 0.75, 0.02);
  // And the other way round: the single job's tenant weighs 3.
  TenantFairQueue reversed;
  const auto seconds_reversed = RunFairQueue(&reversed, jobs, {{"x", 1}, {"y", 3}}, 4000);
  EXPECT_NEAR(FairQueueShare(seconds_reversed, "y"), 0.75, 0.02);
}

TEST(TenantFairQueueTest, AnIdleTenantsShareGoesToTheOthers) {
  TenantFairQueue queue;
  std::vector<FairQueueJob> jobs = EightJobsAgainstOne();
  jobs.push_back({"z", 200, absl::Milliseconds(10), /*active=*/false});
  const std::map<std::string, double> weights = {{"x", 1}, {"y", 1}, {"z", 2}};
  const auto seconds = RunFairQueue(&queue, jobs, weights, 4000);
  // z weighs half of all but queues nothing: x and y split everything.
  EXPECT_EQ(seconds.count("z"), 0u);
  EXPECT_NEAR(FairQueueShare(seconds, "y"), 0.5, 0.02);
  EXPECT_EQ(queue.queued_of_job(200), 0u);
}

TEST(TenantFairQueueTest, AReturningTenantGetsItsShareNotABurst) {
  TenantFairQueue queue;
  std::vector<FairQueueJob> jobs = EightJobsAgainstOne();
  const std::map<std::string, double> weights = {{"x", 1}, {"y", 1}};
  jobs.back().active = false;  // y idle while x runs alone
  const auto alone = RunFairQueue(&queue, jobs, weights, 2000);
  EXPECT_EQ(FairQueueShare(alone, "x"), 1.0);
  // y has queued nothing: it comes back at the virtual time now, not at 0.
  EXPECT_EQ(queue.virtual_seconds("y"), 0.0);
  jobs.back().active = true;
  const auto back = RunFairQueue(&queue, jobs, weights, 200);
  // Banked credit would give y everything for the next 20 s of x's time; it gets half.
  EXPECT_NEAR(FairQueueShare(back, "y"), 0.5, 0.05);
}

TEST(TenantFairQueueTest, NextTakesNothingFromAnEmptyQueueAndForgetsFinishedJobs) {
  TenantFairQueue queue;
  EXPECT_FALSE(queue.Next().has_value());
  queue.Add("x", 1, 1);
  EXPECT_EQ(queue.queued_of_job(1), 1u);
  std::optional<TenantFairQueue::Turn> turn = queue.Next();
  ASSERT_TRUE(turn.has_value());
  EXPECT_EQ(turn->job_id, 1u);
  EXPECT_EQ(queue.queued_of_job(1), 0u);
  EXPECT_FALSE(queue.Next().has_value());
  queue.Done(*turn, absl::Milliseconds(5));
  EXPECT_EQ(queue.virtual_seconds("x"), 0.0);  // nothing queued or running: forgotten
}

}  // namespace
}  // namespace stoker
