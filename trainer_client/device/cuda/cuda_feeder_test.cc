// The CUDA device path against the host conversion (label gpu: skipped without a device).

#include "trainer_client/device/cuda/cuda_feeder.h"

#include <cuda_runtime.h>

#include <vector>

#include "augment/pipeline_text.h"
#include "gtest/gtest.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/tail_on_device.h"
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

// Issue 24's device path: a client-placed tail folded into the feeder gives ClientTail's tensor
// within kTailOnDeviceTolerance.
TEST_F(CudaFeederTest, FoldedTailMatchesTheClientTail) {
  absl::StatusOr<v1::PipelineSpec> tail =
      ParsePipelineText("to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])");
  ASSERT_TRUE(tail.ok());
  tail->set_output_layout(v1::LAYOUT_CHW);
  absl::StatusOr<DeviceNormalization> folded = FoldTailForDevice(*tail, 3);
  ASSERT_TRUE(folded.ok()) << folded.status();
  DeviceOptions options;
  options.device = "cuda:0";
  options.mean = folded->mean;
  options.std = folded->std;
  auto gpu = DeviceFeeder::Create(options);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const Batch batch = MakeHwcBatch(4, 37, 53, 3, 7);
  auto client = ClientTail::Create(*tail, batch.header().shape());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Batch> expected = (*client)->Apply(batch);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<DeviceTensor> on_gpu = (*gpu)->Convert(batch);
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
  ASSERT_EQ(cudaEventSynchronize(static_cast<cudaEvent_t>(on_gpu->ready_event())), cudaSuccess);
  std::vector<float> copied(4 * 37 * 53 * 3);
  ASSERT_EQ(cudaMemcpy(copied.data(), on_gpu->data(), copied.size() * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  const std::string want(expected->bytes().begin(), expected->bytes().end());
  ASSERT_EQ(want.size(), copied.size() * sizeof(float));
  const auto* want_floats = reinterpret_cast<const float*>(want.data());
  for (size_t i = 0; i < copied.size(); ++i) {
    ASSERT_NEAR(copied[i], want_floats[i], kTailOnDeviceTolerance) << "element " << i;
  }
}

}  // namespace
}  // namespace stoker
