#include "trainer_client/consumption_window.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

const absl::Time kWindowStart = absl::FromUnixSeconds(2'000'000);

TEST(ConsumptionWindowTest, WaitFractionAndStepOfTheLoop) {
  ConsumptionWindow window(kWindowStart);
  // Four iterations: wait 30 ms, return a batch, step 70 ms.
  absl::Time now = kWindowStart;
  for (int i = 0; i < 4; ++i) {
    now += absl::Milliseconds(30);
    window.RecordWait(now, absl::Milliseconds(30), /*returned_batch=*/true);
    now += absl::Milliseconds(70);
    window.RecordStep(now, absl::Milliseconds(70));
  }
  const stoker::v1::ClientStats stats = window.Snapshot(now, 4);
  EXPECT_NEAR(stats.data_wait_fraction(), 0.3, 1e-9);
  EXPECT_NEAR(stats.step_seconds(), 0.070, 1e-9);
  EXPECT_NEAR(stats.batches_per_second(), 10, 1e-9);  // 4 batches in 400 ms.
  EXPECT_EQ(stats.batches_delivered(), 4u);
}

TEST(ConsumptionWindowTest, NothingMeasuredYet) {
  ConsumptionWindow window(kWindowStart);
  const stoker::v1::ClientStats stats = window.Snapshot(kWindowStart + absl::Seconds(1), 0);
  EXPECT_EQ(stats.data_wait_fraction(), 0);
  EXPECT_EQ(stats.step_seconds(), 0);
  EXPECT_EQ(stats.batches_per_second(), 0);
}

TEST(ConsumptionWindowTest, OnlyRecentSecondsCount) {
  ConsumptionWindow window(kWindowStart);
  window.RecordWait(kWindowStart + absl::Seconds(1), absl::Seconds(1), true);  // An old, long wait.
  const absl::Time later = kWindowStart + absl::Seconds(30);
  window.RecordWait(later, absl::Milliseconds(10), true);
  window.RecordStep(later, absl::Milliseconds(90));
  EXPECT_NEAR(window.Snapshot(later, 2).data_wait_fraction(), 0.1, 1e-9);
}

TEST(ConsumptionWindowTest, ReceivedBytesAndReceiveBusyFraction) {
  ConsumptionWindow window(kWindowStart);
  // Over one second, 4 batches of 1 MB each keep the receive path busy 50 ms.
  for (int i = 1; i <= 4; ++i) {
    window.RecordReceived(kWindowStart + absl::Milliseconds(250 * i), 1'000'000,
                          absl::Milliseconds(50));
  }
  const stoker::v1::ClientStats stats = window.Snapshot(kWindowStart + absl::Seconds(1), 4);
  EXPECT_NEAR(stats.received_wire_bytes_per_second(), 4e6, 1e-3);
  EXPECT_NEAR(stats.receive_busy_fraction(), 0.2, 1e-9);
}

TEST(ConsumptionWindowTest, ParallelStreamsBusyAtMostTheWholeTime) {
  ConsumptionWindow window(kWindowStart);
  // Two streams each busy the whole second.
  window.RecordReceived(kWindowStart + absl::Seconds(1), 1, absl::Seconds(1));
  window.RecordReceived(kWindowStart + absl::Seconds(1), 1, absl::Seconds(1));
  EXPECT_EQ(window.Snapshot(kWindowStart + absl::Seconds(1), 0).receive_busy_fraction(), 1.0);
}

TEST(ConsumptionWindowTest, GpuUtilizationIsTheMeanOfRecentSamples) {
  ConsumptionWindow window(kWindowStart);
  EXPECT_FALSE(window.Snapshot(kWindowStart, 0).has_gpu_utilization());  // unknown, not 0
  window.RecordGpuUtilization(kWindowStart + absl::Seconds(1), 0.0);     // an old sample
  const absl::Time later = kWindowStart + absl::Seconds(30);
  window.RecordGpuUtilization(later, 0.5);
  window.RecordGpuUtilization(later + absl::Milliseconds(200), 0.9);
  EXPECT_NEAR(window.Snapshot(later + absl::Milliseconds(200), 0).gpu_utilization(), 0.7, 1e-9);
}

}  // namespace
}  // namespace stoker
