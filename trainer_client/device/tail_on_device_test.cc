#include "trainer_client/device/tail_on_device.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "augment/pipeline_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/testing/hwc_batch.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::PipelineSpec Tail(const std::string& text, v1::Layout layout = v1::LAYOUT_CHW,
                      v1::DType dtype = v1::DTYPE_UNSPECIFIED) {
  absl::StatusOr<v1::PipelineSpec> spec = ParsePipelineText(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  spec->set_output_layout(layout);
  spec->set_output_dtype(dtype);
  return *spec;
}

// The client tail on the CPU and the folded tail on the device path give the same tensor.
void ExpectDevicePathMatchesClientTail(const v1::PipelineSpec& tail) {
  const Batch batch = MakeHwcBatch(2, 5, 7, 3, /*seed=*/17);
  absl::StatusOr<std::unique_ptr<ClientTail>> client =
      ClientTail::Create(tail, batch.header().shape());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Batch> expected = (*client)->Apply(batch);
  ASSERT_TRUE(expected.ok()) << expected.status();

  absl::StatusOr<DeviceNormalization> folded = FoldTailForDevice(tail, 3);
  ASSERT_TRUE(folded.ok()) << folded.status();
  DeviceOptions options;
  options.mean = folded->mean;
  options.std = folded->std;
  absl::StatusOr<std::unique_ptr<DeviceFeeder>> feeder = DeviceFeeder::Create(options);
  ASSERT_TRUE(feeder.ok()) << feeder.status();
  absl::StatusOr<DeviceTensor> got = (*feeder)->Convert(batch);
  ASSERT_TRUE(got.ok()) << got.status();

  ASSERT_EQ(
      std::vector<int64_t>(got->shape().begin(), got->shape().end()),
      std::vector<int64_t>(expected->header().shape().begin(), expected->header().shape().end()));
  const std::string want(expected->bytes().begin(), expected->bytes().end());
  const auto* want_floats = reinterpret_cast<const float*>(want.data());
  const size_t count = want.size() / sizeof(float);
  ASSERT_EQ(count, 2u * 5 * 7 * 3);
  float worst = 0;
  for (size_t i = 0; i < count; ++i) {
    const float scale = std::max(1.0f, std::fabs(want_floats[i]));
    worst = std::max(worst, std::fabs(got->data()[i] - want_floats[i]) / scale);
  }
  EXPECT_LE(worst, kTailOnDeviceTolerance);
}

TEST(TailOnDeviceTest, ImageNetNormalizationMatchesTheClientTail) {
  ExpectDevicePathMatchesClientTail(
      Tail("to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"));
}

TEST(TailOnDeviceTest, ChainedNormalizationsFoldIntoOne) {
  const v1::PipelineSpec tail = Tail(
      "to_float, normalize(mean=[0.5,0.25,0.1], std=[0.5,2,0.3]), "
      "normalize(mean=[1,-1,0.5], std=[4,0.5,2])");
  absl::StatusOr<DeviceNormalization> folded = FoldTailForDevice(tail, 3);
  ASSERT_TRUE(folded.ok()) << folded.status();
  // mean = m1 + m2·s1, std = s1·s2.
  EXPECT_THAT(folded->mean, ElementsAre(1.0f, -1.75f, 0.25f));
  EXPECT_THAT(folded->std, ElementsAre(2.0f, 1.0f, 0.6f));
  ExpectDevicePathMatchesClientTail(tail);
}

TEST(TailOnDeviceTest, ToFloatAloneIsPlainScaling) {
  absl::StatusOr<DeviceNormalization> folded = FoldTailForDevice(Tail("to_float"), 3);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_TRUE(folded->mean.empty() && folded->std.empty());
  ExpectDevicePathMatchesClientTail(Tail("to_float"));
}

TEST(TailOnDeviceTest, NamesWhatTheDevicePathCannotRun) {
  const auto message = [](const v1::PipelineSpec& tail, int channels = 3) {
    absl::StatusOr<DeviceNormalization> folded = FoldTailForDevice(tail, channels);
    EXPECT_EQ(folded.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(folded.status().message());
  };
  EXPECT_THAT(message(Tail("to_float", v1::LAYOUT_HWC)), HasSubstr("tail.output"));
  EXPECT_THAT(message(Tail("to_float", v1::LAYOUT_CHW, v1::DTYPE_FLOAT16)),
              HasSubstr("tail.output"));
  EXPECT_THAT(message(Tail("horizontal_flip(p=1), to_float")), HasSubstr("tail.ops[0]"));
  EXPECT_THAT(message(Tail("to_float, horizontal_flip(p=1)")), HasSubstr("tail.ops[1]"));
  EXPECT_THAT(message(Tail("to_float, normalize(mean=[0.5], std=[0.5])")),
              HasSubstr("tail.ops[1].normalize: 1 means and 1 stds for 3 channels"));
  v1::PipelineSpec zero_std = Tail("to_float, normalize(mean=[0,0,0], std=[1,1,1])");
  zero_std.mutable_ops(1)->mutable_normalize()->set_std(2, 0.0f);
  EXPECT_THAT(message(zero_std), HasSubstr("tail.ops[1].normalize.std[2]"));
}

}  // namespace
}  // namespace stoker
