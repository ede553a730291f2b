// The CUDA device path against the host conversion (label gpu: skipped without a device).

#include "trainer_client/device/cuda/cuda_feeder.h"

#include <cuda_runtime.h>

#include <vector>

#include "gtest/gtest.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/testing/hwc_batch.h"

namespace stoker {
namespace {

class CudaFeederTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(CudaFeederTest, MatchesTheHostConversionAcrossSlotReuse) {
  DeviceOptions options;
  options.mean = {0.485f, 0.456f, 0.406f};
  options.std = {0.229f, 0.224f, 0.225f};
  DeviceOptions gpu_options = options;
  gpu_options.device = "cuda:0";
  auto gpu = DeviceFeeder::Create(gpu_options);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto host = DeviceFeeder::Create(options);
  ASSERT_TRUE(host.ok());
  for (int round = 0; round < 5; ++round) {  // More rounds than slots: slots are reused.
    const Batch batch = MakeHwcBatch(4, 37, 53, 3, round);
    absl::StatusOr<DeviceTensor> on_gpu = (*gpu)->Convert(batch);
    ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
    absl::StatusOr<DeviceTensor> on_host = (*host)->Convert(batch);
    ASSERT_TRUE(on_host.ok());
    ASSERT_NE(on_gpu->ready_event(), nullptr);
    ASSERT_EQ(cudaEventSynchronize(static_cast<cudaEvent_t>(on_gpu->ready_event())), cudaSuccess);
    std::vector<float> copied(4 * 37 * 53 * 3);
    ASSERT_EQ(cudaMemcpy(copied.data(), on_gpu->data(), copied.size() * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (size_t i = 0; i < copied.size(); ++i) {
      ASSERT_NEAR(copied[i], on_host->data()[i], 1e-5) << "element " << i << " round " << round;
    }
  }
}

}  // namespace
}  // namespace stoker
