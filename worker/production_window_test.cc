#include "worker/production_window.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(3'000'000);

TaskTime Cpu(absl::Duration cpu, absl::Duration wall) { return TaskTime{cpu, wall}; }

TEST(ProductionWindowTest, BusyFractionAndRatePerJob) {
  ProductionWindow window(kStart, /*threads=*/2);
  // Over 4 s: job 7 gets 10 batches of 64 samples, each 300 ms of one thread; job 9 gets one.
  for (int i = 1; i <= 10; ++i) {
    window.Record(kStart + absl::Milliseconds(400 * i), 7,
                  Cpu(absl::Milliseconds(300), absl::Milliseconds(300)), 64);
  }
  window.Record(kStart + absl::Seconds(4), 9, Cpu(absl::Milliseconds(200), absl::Milliseconds(200)),
                32);
  stoker::v1::WorkerStats stats;
  window.Report(kStart + absl::Seconds(4), &stats);
  // (10 × 0.3 + 0.2) s busy of 2 threads × 4 s.
  EXPECT_NEAR(stats.busy_fraction(), 3.2 / 8, 1e-9);
  EXPECT_NEAR(stats.occupied_fraction(), 3.2 / 8, 1e-9);
  ASSERT_EQ(stats.job_rates_size(), 2);
  EXPECT_EQ(stats.job_rates(0).job_id(), 7u);
  EXPECT_NEAR(stats.job_rates(0).samples_per_second(), 160, 1e-9);
  EXPECT_EQ(stats.job_rates(1).job_id(), 9u);
  EXPECT_NEAR(stats.job_rates(1).samples_per_second(), 8, 1e-9);
}

// A thread that holds its task 400 ms but runs 250 ms of it (it waited for a core, or its
// process's CPU quota) is occupied 400 ms: what the advisor extrapolates on a contended host.
TEST(ProductionWindowTest, OccupiedCountsWallTimeBusyCountsCpuTime) {
  ProductionWindow window(kStart, /*threads=*/1);
  for (int i = 1; i <= 5; ++i) {
    window.Record(kStart + absl::Milliseconds(400 * i), 7,
                  Cpu(absl::Milliseconds(250), absl::Milliseconds(400)), 16);
  }
  stoker::v1::WorkerStats stats;
  window.Report(kStart + absl::Seconds(2), &stats);
  EXPECT_NEAR(stats.busy_fraction(), 1.25 / 2, 1e-9);
  EXPECT_NEAR(stats.occupied_fraction(), 1.0, 1e-9);
}

TEST(ProductionWindowTest, ProcessCpuOverTheProcessCpus) {
  ProductionWindow window(kStart, /*threads=*/1, /*process_cpus=*/2);
  stoker::v1::WorkerStats stats;
  window.RecordProcessCpu(kStart, absl::Seconds(7));  // sets where counting starts
  window.Report(kStart, &stats);
  EXPECT_EQ(stats.process_cpu_fraction(), 0);
  // 3 s of process CPU over 2 s of 2 CPUs; a reading that went back counts nothing.
  window.RecordProcessCpu(kStart + absl::Seconds(1), absl::Seconds(8));
  window.RecordProcessCpu(kStart + absl::Milliseconds(1500), absl::Seconds(6));
  window.RecordProcessCpu(kStart + absl::Seconds(2), absl::Seconds(10));
  window.Report(kStart + absl::Seconds(2), &stats);
  EXPECT_NEAR(stats.process_cpu_fraction(), 3.0 / 4, 1e-9);
}

TEST(ProductionWindowTest, ProcessCpuIsNotReportedForASharedProcess) {
  ProductionWindow window(kStart, /*threads=*/1);
  window.RecordProcessCpu(kStart, absl::Seconds(1));
  window.RecordProcessCpu(kStart + absl::Seconds(1), absl::Seconds(2));
  stoker::v1::WorkerStats stats;
  window.Report(kStart + absl::Seconds(1), &stats);
  EXPECT_EQ(stats.process_cpu_fraction(), 0);
}

TEST(ProductionWindowTest, IdleJobsAreForgotten) {
  ProductionWindow window(kStart, 1);
  window.Record(kStart + absl::Seconds(1), 7, Cpu(absl::Seconds(1), absl::Seconds(1)), 64);
  stoker::v1::WorkerStats stats;
  window.Report(kStart + absl::Seconds(60), &stats);
  EXPECT_EQ(stats.busy_fraction(), 0);
  EXPECT_EQ(stats.occupied_fraction(), 0);
  EXPECT_EQ(stats.job_rates_size(), 0);
}

}  // namespace
}  // namespace stoker
