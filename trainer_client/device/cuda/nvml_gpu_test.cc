// The trainer's GPU utilization on a machine with an NVIDIA GPU and driver (label gpu; skipped
// without a CUDA device): the driver's own libnvidia-ml.so.1 found for cuda:0's PCI bus id, and a
// Loader feeding that device reporting it in its heartbeats. The unit tests cover the same code
// against a stand-in NVML (trainer_client/device/gpu_utilization_test.cc).

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "trainer_client/device/cuda/cuda_feeder.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/gpu_utilization.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker {
namespace {

using NvmlLoaderTest = testing::LoaderTest;

TEST(NvmlGpuTest, SamplesTheDriversNvmlForCuda0) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string bus_id = CudaPciBusIdOf("cuda:0");
  ASSERT_FALSE(bus_id.empty());
  std::unique_ptr<NvmlGpuUtilizationSampler> sampler = NvmlGpuUtilizationSampler::Open(bus_id);
  ASSERT_NE(sampler, nullptr) << kNvmlLibrary << " did not load or does not know " << bus_id;
  const std::optional<double> utilization = sampler->Sample();
  ASSERT_TRUE(utilization.has_value());
  EXPECT_GE(*utilization, 0.0);
  EXPECT_LE(*utilization, 1.0);
  std::printf("cuda:0 at %s: GPU utilization %.2f\n", bus_id.c_str(), *utilization);
}

TEST_F(NvmlLoaderTest, HeartbeatsCarryCuda0sUtilization) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  gpu_utilization_ = NvmlGpuUtilizationSampler::Open(CudaPciBusIdOf("cuda:0"));
  ASSERT_NE(gpu_utilization_, nullptr);
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  const v1::ClientStats stats = coordinator_->last_stats();
  ASSERT_TRUE(stats.has_gpu_utilization());
  std::printf("heartbeat ClientStats.gpu_utilization %.2f\n", stats.gpu_utilization());
}

}  // namespace
}  // namespace stoker
