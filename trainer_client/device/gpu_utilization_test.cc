#include "trainer_client/device/gpu_utilization.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

// FAKE_NVML_PATH is trainer_client/device/testing/fake_nvml.cc built as a shared library: no NVML
// exists on the machines that run the unit tests, so the real dlopen/dlsym path is exercised
// against that stand-in (a GPU machine checks the real library: docs/metrics.md).

TEST(NvmlGpuUtilizationSamplerTest, AbsentLibraryIsUnknown) {
  EXPECT_EQ(NvmlGpuUtilizationSampler::Open("00000000:01:00.0", "libstoker-no-such-nvml.so.1"),
            nullptr);
}

TEST(NvmlGpuUtilizationSamplerTest, LibraryWithoutNvmlSymbolsIsUnknown) {
  EXPECT_EQ(NvmlGpuUtilizationSampler::Open("00000000:01:00.0", "libm.so.6"), nullptr);
}

TEST(NvmlGpuUtilizationSamplerTest, ReadsTheDevicesUtilization) {
  std::unique_ptr<NvmlGpuUtilizationSampler> sampler =
      NvmlGpuUtilizationSampler::Open("00000000:01:00.0", FAKE_NVML_PATH);
  ASSERT_NE(sampler, nullptr);
  EXPECT_THAT(sampler->Sample(), ::testing::Optional(::testing::DoubleEq(0.73)));
}

TEST(NvmlGpuUtilizationSamplerTest, DeviceNvmlDoesNotKnowIsUnknown) {
  EXPECT_EQ(NvmlGpuUtilizationSampler::Open("00000000:09:00.0", FAKE_NVML_PATH), nullptr);
}

TEST(NvmlGpuUtilizationSamplerTest, FailedQueryIsUnknown) {
  std::unique_ptr<NvmlGpuUtilizationSampler> sampler =
      NvmlGpuUtilizationSampler::Open("00000000:02:00.0", FAKE_NVML_PATH);
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(sampler->Sample(), std::nullopt);
}

}  // namespace
}  // namespace stoker
