// A Loader given NvmlGpuUtilizationSampler (LoaderEnv::gpu_utilization) reports what NVML says in
// its heartbeats. FAKE_NVML_PATH is a stand-in NVML built from testing/fake_nvml.cc, since no
// NVIDIA driver exists where the unit tests run: 73% busy at bus id 00000000:01:00.0, a failing
// query at 00000000:02:00.0.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/device/gpu_utilization.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker::testing {
namespace {

TEST_F(LoaderTest, HeartbeatsCarryNvmlsUtilization) {
  gpu_utilization_ = NvmlGpuUtilizationSampler::Open("00000000:01:00.0", FAKE_NVML_PATH);
  ASSERT_NE(gpu_utilization_, nullptr);
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_THAT(coordinator_->last_stats().gpu_utilization(), ::testing::DoubleEq(0.73));
}

TEST_F(LoaderTest, AFailingNvmlQueryLeavesTheUtilizationUnset) {
  gpu_utilization_ = NvmlGpuUtilizationSampler::Open("00000000:02:00.0", FAKE_NVML_PATH);
  ASSERT_NE(gpu_utilization_, nullptr);
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_FALSE(coordinator_->last_stats().has_gpu_utilization());
}

}  // namespace
}  // namespace stoker::testing
