// GetStatus: the figures heartbeats report, the advice built from them, and what is forgotten.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/clock.h"
#include "common/pool_name.h"
#include "coordinator/coordinator.h"
#include "coordinator/source_factory_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

class CoordinatorStatusTest : public ::testing::Test {
 protected:
  static CoordinatorConfig TestConfig() {
    CoordinatorConfig config;
    config.worker_timeout = absl::Seconds(5);
    config.advisor.prices.gpu_node_dollars_per_hour = 1.408;
    config.advisor.prices.worker_pool_dollars_per_hour = {{"cpu-a", 0.816}};
    return config;
  }

  void SetUp() override {
    stoker::v1::OpenJobRequest open;
    open.set_name("status");
    *open.mutable_spec() = SmallJobSpec(/*world_size=*/1);  // batch 4
    auto opened = coordinator_.OpenJob(open);
    ASSERT_THAT(opened, IsOk());
    job_id_ = opened->job_id();
  }

  uint64_t RegisterBusyWorker(const std::string& address, double samples_per_second, double busy,
                              const std::string& pool = "") {
    stoker::v1::RegisterWorkerRequest request;
    request.set_address(address);
    request.set_cores(1);
    request.set_pool(pool);
    auto registered = coordinator_.RegisterWorker(request);
    EXPECT_THAT(registered, IsOk());
    stoker::v1::WorkerHeartbeatRequest heartbeat;
    heartbeat.set_worker_id(registered->worker_id());
    heartbeat.mutable_stats()->set_busy_fraction(busy);
    stoker::v1::JobRate* rate = heartbeat.mutable_stats()->add_job_rates();
    rate->set_job_id(job_id_);
    rate->set_samples_per_second(samples_per_second);
    EXPECT_THAT(coordinator_.WorkerHeartbeat(heartbeat), IsOk());
    return registered->worker_id();
  }

  void ReportClient(double wait_fraction, double step_seconds) {
    stoker::v1::ClientHeartbeatRequest request;
    request.set_job_id(job_id_);
    request.set_rank(0);
    request.set_client_id("client-a");
    request.mutable_stats()->set_data_wait_fraction(wait_fraction);
    request.mutable_stats()->set_step_seconds(step_seconds);
    request.mutable_stats()->set_batches_delivered(17);
    ASSERT_THAT(coordinator_.ClientHeartbeat(request), IsOk());
  }

  FakeClock clock_;
  Coordinator coordinator_{TestConfig(), &clock_, nullptr, TestSourceFactory()};
  uint64_t job_id_ = 0;
};

TEST_F(CoordinatorStatusTest, ReportsRanksWorkersAndAdvice) {
  // Demand: batch 4 every 10 ms = 400 samples/s. One worker makes 90 samples/s at 90% busy.
  const uint64_t worker = RegisterBusyWorker("127.0.0.1:1", 90, 0.9);
  ReportClient(0.75, 0.010);
  clock_.Advance(absl::Milliseconds(300));

  const stoker::v1::GetStatusResponse status = coordinator_.GetStatus();
  ASSERT_THAT(status.jobs(), SizeIs(1));
  const stoker::v1::JobStatus& job = status.jobs(0);
  EXPECT_EQ(job.name(), "status");
  EXPECT_EQ(job.state(), stoker::v1::JOB_STATE_RUNNING);
  ASSERT_THAT(job.ranks(), SizeIs(1));
  EXPECT_EQ(job.ranks(0).client_id(), "client-a");
  EXPECT_EQ(job.ranks(0).stats().batches_delivered(), 17u);
  EXPECT_EQ(job.ranks(0).last_report_age_ms(), 300);
  // 400 × 1.1 / 100 = 4.4 → 5 workers.
  EXPECT_TRUE(job.advice().measured());
  EXPECT_EQ(job.advice().workers_now(), 1u);
  EXPECT_EQ(job.advice().workers_desired(), 5u);
  EXPECT_THAT(job.advice().explanation(), HasSubstr("rank 0 waits 75% of its step"));
  EXPECT_THAT(job.advice().explanation(), HasSubstr(": add 4"));

  ASSERT_THAT(status.workers(), SizeIs(1));
  EXPECT_EQ(status.workers(0).info().worker_id(), worker);
  EXPECT_DOUBLE_EQ(status.workers(0).busy_fraction(), 0.9);
  EXPECT_EQ(status.workers(0).last_heartbeat_age_ms(), 300);
}

// Prices by pool: the job's and the cluster's dollars, and the predictions per worker count.
TEST_F(CoordinatorStatusTest, PricesWorkersByPoolAndReportsTheCluster) {
  // 400 samples/s demanded; one cpu-a worker at $0.816/h makes 90 at 90% busy (100 at full).
  RegisterBusyWorker("127.0.0.1:1", 90, 0.9, "cpu-a");
  ReportClient(0.75, 0.010);
  const stoker::v1::GetStatusResponse status = coordinator_.GetStatus();
  EXPECT_EQ(status.workers(0).info().pool(), "cpu-a");
  const stoker::v1::JobAdvice& advice = status.jobs(0).advice();
  EXPECT_EQ(advice.knee_workers(), 4u);
  ASSERT_THAT(advice.predicted(), SizeIs(7));  // 1..desired 5 + 2
  const stoker::v1::WorkerCountCost& four = advice.predicted(3);
  EXPECT_EQ(four.workers(), 4u);
  EXPECT_DOUBLE_EQ(four.dollars_per_hour(), 1.408 + 4 * 0.816);
  // An epoch is 10 batches of 4 samples: 40 samples, 0.1 s at 400 samples/s.
  EXPECT_DOUBLE_EQ(four.epoch_seconds(), 0.1);
  EXPECT_DOUBLE_EQ(advice.now().dollars_per_hour(), 1.408 + 0.816);
  EXPECT_DOUBLE_EQ(advice.now().epoch_seconds(), 40.0 / 90);

  const stoker::v1::ClusterCost& cluster = status.cluster();
  EXPECT_EQ(cluster.workers_now(), 1u);
  EXPECT_EQ(cluster.workers_desired(), 5u);
  EXPECT_DOUBLE_EQ(cluster.samples_per_second(), 90);
  EXPECT_DOUBLE_EQ(cluster.dollars_per_hour(), 1.408 + 0.816);
  EXPECT_DOUBLE_EQ(cluster.samples_per_dollar(), 90 * 3600 / (1.408 + 0.816));
  EXPECT_DOUBLE_EQ(cluster.gpu_hours_lost_per_hour(), 0.75);
}

TEST_F(CoordinatorStatusTest, RefusesABadPoolName) {
  stoker::v1::RegisterWorkerRequest request;
  request.set_address("127.0.0.1:1");
  request.set_cores(1);
  request.set_pool("cpu a");
  EXPECT_THAT(coordinator_.RegisterWorker(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pool: only [A-Za-z0-9._-]")));
  request.set_pool(std::string(kMaxPoolNameBytes + 1, 'a'));
  EXPECT_THAT(coordinator_.RegisterWorker(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pool: 64 bytes")));
}

// The advice extrapolates a worker by the most used of what its heartbeat reports: here its
// process's CPU (90% of its CPUs) while its producer thread is 30% busy and 60% occupied, so
// 90 samples/s is 100 at full use: 5 workers, as at 90% busy above (not 2, from 30% busy).
TEST_F(CoordinatorStatusTest, AdviceUsesTheWorkersOccupancyAndProcessCpu) {
  const uint64_t worker = RegisterBusyWorker("127.0.0.1:1", 90, 0.3);
  stoker::v1::WorkerHeartbeatRequest heartbeat;
  heartbeat.set_worker_id(worker);
  heartbeat.mutable_stats()->set_busy_fraction(0.3);
  heartbeat.mutable_stats()->set_occupied_fraction(0.6);
  heartbeat.mutable_stats()->set_process_cpu_fraction(0.9);
  stoker::v1::JobRate* rate = heartbeat.mutable_stats()->add_job_rates();
  rate->set_job_id(job_id_);
  rate->set_samples_per_second(90);
  ASSERT_THAT(coordinator_.WorkerHeartbeat(heartbeat), IsOk());
  ReportClient(0.75, 0.010);

  const stoker::v1::GetStatusResponse status = coordinator_.GetStatus();
  const stoker::v1::JobAdvice& advice = status.jobs(0).advice();
  EXPECT_EQ(advice.workers_desired(), 5u);  // 400 × 1.1 / 100 = 4.4 → 5
  EXPECT_EQ(advice.knee_workers(), 4u);
  EXPECT_THAT(advice.explanation(), HasSubstr("1 worker at 90% busy"));
}

TEST_F(CoordinatorStatusTest, LostWorkerLeavesTheAdvice) {
  RegisterBusyWorker("127.0.0.1:1", 200, 0.5);
  RegisterBusyWorker("127.0.0.1:2", 200, 0.5);
  ReportClient(0.0, 0.010);
  EXPECT_EQ(coordinator_.GetStatus().jobs(0).advice().workers_now(), 2u);

  clock_.Advance(absl::Seconds(6));  // Past worker_timeout: both are lost.
  const stoker::v1::GetStatusResponse status = coordinator_.GetStatus();
  EXPECT_THAT(status.workers(), SizeIs(0));
  EXPECT_EQ(status.workers_lost(), 2u);
  EXPECT_EQ(status.jobs(0).advice().workers_now(), 0u);
  EXPECT_FALSE(status.jobs(0).advice().measured());
  EXPECT_THAT(status.jobs(0).advice().explanation(), HasSubstr("no workers"));
}

// Two jobs on one worker that works only for the first: the second job's advice has no
// capacity to extrapolate (its rate is 0 while the worker is busy), and says so instead of
// dividing by zero (an infinity cast to uint32 before).
TEST_F(CoordinatorStatusTest, AWorkerBusyWithAnotherJobIsNotExtrapolated) {
  RegisterBusyWorker("127.0.0.1:1", 90, 0.95);  // all of it for job "status"
  ReportClient(0.5, 0.010);
  stoker::v1::OpenJobRequest open;
  open.set_name("starved");
  *open.mutable_spec() = SmallJobSpec(/*world_size=*/1);
  auto starved = coordinator_.OpenJob(open);
  ASSERT_THAT(starved, IsOk());
  stoker::v1::ClientHeartbeatRequest report;
  report.set_job_id(starved->job_id());
  report.set_client_id("client-b");
  report.mutable_stats()->set_data_wait_fraction(0.9);
  report.mutable_stats()->set_step_seconds(0.010);
  ASSERT_THAT(coordinator_.ClientHeartbeat(report), IsOk());

  const stoker::v1::GetStatusResponse status = coordinator_.GetStatus();
  ASSERT_THAT(status.jobs(), SizeIs(2));
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    if (job.name() == "status") {
      EXPECT_TRUE(job.advice().measured());
      EXPECT_EQ(job.advice().workers_desired(), 5u);  // 400 x 1.1 / (90 / 0.95)
    } else {
      EXPECT_FALSE(job.advice().measured());
      EXPECT_EQ(job.advice().workers_desired(), 1u);  // = workers_now
      EXPECT_THAT(job.advice().explanation(), HasSubstr("they work for other jobs"));
    }
  }
}

// Figures from heartbeats are whatever a peer sends: NaN, infinite or absurd ones give advice
// that is defined and bounded.
TEST_F(CoordinatorStatusTest, AbsurdReportsGiveBoundedAdvice) {
  RegisterBusyWorker("127.0.0.1:1", 1e-300, std::numeric_limits<double>::infinity());
  ReportClient(std::nan(""), 1e-300);
  const stoker::v1::JobAdvice advice = coordinator_.GetStatus().jobs(0).advice();
  EXPECT_TRUE(advice.measured());
  EXPECT_EQ(advice.workers_desired(), kMaxWorkersDesired);
  EXPECT_TRUE(std::isfinite(advice.demand_samples_per_second()));
  ReportClient(0.5, std::nan(""));
  EXPECT_FALSE(coordinator_.GetStatus().jobs(0).advice().measured());
}

}  // namespace
}  // namespace stoker
