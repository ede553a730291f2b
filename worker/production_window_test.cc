#include "worker/production_window.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(3'000'000);

TEST(ProductionWindowTest, BusyFractionAndRatePerJob) {
  ProductionWindow window(kStart, /*threads=*/2);
  // Over 4 s: job 7 gets 10 batches of 64 samples, each 300 ms of one thread; job 9 gets one.
  for (int i = 1; i <= 10; ++i) {
    window.Record(kStart + absl::Milliseconds(400 * i), 7, absl::Milliseconds(300), 64);
  }
  window.Record(kStart + absl::Seconds(4), 9, absl::Milliseconds(200), 32);
  stoker::v1::WorkerStats stats;
  window.Report(kStart + absl::Seconds(4), &stats);
  // (10 × 0.3 + 0.2) s busy of 2 threads × 4 s.
  EXPECT_NEAR(stats.busy_fraction(), 3.2 / 8, 1e-9);
  ASSERT_EQ(stats.job_rates_size(), 2);
  EXPECT_EQ(stats.job_rates(0).job_id(), 7u);
  EXPECT_NEAR(stats.job_rates(0).samples_per_second(), 160, 1e-9);
  EXPECT_EQ(stats.job_rates(1).job_id(), 9u);
  EXPECT_NEAR(stats.job_rates(1).samples_per_second(), 8, 1e-9);
}

TEST(ProductionWindowTest, IdleJobsAreForgotten) {
  ProductionWindow window(kStart, 1);
  window.Record(kStart + absl::Seconds(1), 7, absl::Seconds(1), 64);
  stoker::v1::WorkerStats stats;
  window.Report(kStart + absl::Seconds(60), &stats);
  EXPECT_EQ(stats.busy_fraction(), 0);
  EXPECT_EQ(stats.job_rates_size(), 0);
}

}  // namespace
}  // namespace stoker
