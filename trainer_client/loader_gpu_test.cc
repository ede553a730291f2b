// The Loader's heartbeats carry the fed GPU's utilization (LoaderOptions::gpu_pci_bus_id),
// sampled from FAKE_NVML_PATH: a stand-in NVML built from testing/fake_nvml.cc, since no NVIDIA
// driver exists where the unit tests run. 73% busy at bus id 00000000:01:00.0.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker::testing {
namespace {

TEST_F(LoaderTest, HeartbeatsCarryTheFedGpusUtilization) {
  nvml_library_ = FAKE_NVML_PATH;
  options_.gpu_pci_bus_id = "00000000:01:00.0";
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_THAT(coordinator_->last_stats().gpu_utilization(), ::testing::DoubleEq(0.73));
}

TEST_F(LoaderTest, WithoutAGpuTheUtilizationIsUnset) {
  nvml_library_ = FAKE_NVML_PATH;  // present, but the loader feeds no GPU
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_FALSE(coordinator_->last_stats().has_gpu_utilization());
}

TEST_F(LoaderTest, WithoutNvmlTheUtilizationIsUnset) {
  nvml_library_ = "libstoker-no-such-nvml.so.1";
  options_.gpu_pci_bus_id = "00000000:01:00.0";
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);  // no NVML is not an error
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_FALSE(coordinator_->last_stats().has_gpu_utilization());
}

}  // namespace
}  // namespace stoker::testing
