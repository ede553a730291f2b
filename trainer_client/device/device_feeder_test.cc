#include "trainer_client/device/device_feeder.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/worker.pb.h"
#include "trainer_client/device/testing/hwc_batch.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A uint8 HWC batch [n, h, w, c] whose bytes are 0, 1, 2, ...
TEST(DeviceOptionsTest, ParsesDevicesAndNamesBadFields) {
  EXPECT_EQ(ParseDevice("cuda:3")->index, 3);
  EXPECT_EQ(ParseDevice("cuda")->kind, DeviceKind::kCuda);
  EXPECT_EQ(ParseDevice("cpu")->kind, DeviceKind::kCpu);
  EXPECT_EQ(ParseDevice("gpu").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDevice("cuda:-1").status().code(), absl::StatusCode::kInvalidArgument);

  DeviceOptions options;
  options.resident_batches = 0;
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("resident_batches"));
  options.resident_batches = 2;
  options.mean = {0.5f};
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("mean, std"));
  options.std = {0.0f};
  EXPECT_EQ(options.Validate().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("std[0]"));
}

TEST(HostFeederTest, NormalizesIntoChw) {
  DeviceOptions options;
  options.mean = {0.5f, 0.25f};
  options.std = {0.5f, 2.0f};
  auto feeder = DeviceFeeder::Create(options);
  ASSERT_TRUE(feeder.ok()) << feeder.status();
  // One 1×2 image, two channels: pixel 0 = (0, 1), pixel 1 = (2, 3).
  absl::StatusOr<DeviceTensor> tensor = (*feeder)->Convert(MakeHwcBatch(1, 1, 2, 2));
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(tensor->shape(), ElementsAre(1, 2, 1, 2));
  EXPECT_EQ(tensor->ready_event(), nullptr);
  EXPECT_EQ(tensor->device().kind, DeviceKind::kCpu);
  const float* out = tensor->data();
  // Channel 0: (x/255 − 0.5) / 0.5 for x = 0, 2; channel 1: (x/255 − 0.25) / 2 for x = 1, 3.
  EXPECT_FLOAT_EQ(out[0], -1.0f);
  EXPECT_FLOAT_EQ(out[1], (2 / 255.0f - 0.5f) / 0.5f);
  EXPECT_FLOAT_EQ(out[2], (1 / 255.0f - 0.25f) / 2.0f);
  EXPECT_FLOAT_EQ(out[3], (3 / 255.0f - 0.25f) / 2.0f);
  EXPECT_THAT(tensor->batch().labels(), ElementsAre(0));
}

TEST(HostFeederTest, WithoutMeanAndStdScalesToUnitRange) {
  auto feeder = DeviceFeeder::Create(DeviceOptions());
  ASSERT_TRUE(feeder.ok());
  absl::StatusOr<DeviceTensor> tensor = (*feeder)->Convert(MakeHwcBatch(2, 3, 4, 3));
  ASSERT_TRUE(tensor.ok());
  // Element [1][2][0][3] (CHW) comes from HWC byte ((1·3 + 0)·4 + 3)·3 + 2 = 47.
  EXPECT_FLOAT_EQ(tensor->data()[((1 * 3 + 2) * 3 + 0) * 4 + 3], 47 / 255.0f);
}

TEST(HostFeederTest, RefusesWhatIsNotUint8Hwc) {
  auto feeder = DeviceFeeder::Create(DeviceOptions());
  ASSERT_TRUE(feeder.ok());
  EXPECT_EQ((*feeder)->Convert(MakeHwcBatch(1, 2, 2, 3, 0, v1::DTYPE_FLOAT32)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*feeder)->Convert(MakeHwcBatch(1, 2, 2, 5)).status().code(),
            absl::StatusCode::kInvalidArgument);
  DeviceOptions three_channels;
  three_channels.mean = {0, 0, 0};
  three_channels.std = {1, 1, 1};
  auto strict = DeviceFeeder::Create(three_channels);
  ASSERT_TRUE(strict.ok());
  EXPECT_THAT(std::string((*strict)->Convert(MakeHwcBatch(1, 2, 2, 1)).status().message()),
              HasSubstr("normalizes 3"));
}

TEST(HostFeederTest, RefusesAPayloadOfAnotherSizeThanItsShape) {
  auto message = std::make_shared<v1::BatchMessage>();
  for (int dim : {1, 2, 2, 3}) message->mutable_header()->add_shape(dim);
  message->mutable_header()->set_dtype(v1::DTYPE_UINT8);
  message->mutable_header()->set_layout(v1::LAYOUT_HWC);
  message->set_data("12345");  // 12 bytes expected
  auto feeder = DeviceFeeder::Create(DeviceOptions());
  ASSERT_TRUE(feeder.ok());
  const absl::Status status = (*feeder)->Convert(Batch(message)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("batch: 5 payload bytes, but its shape [1, 2, 2, 3] needs 12"));
}

TEST(HostFeederTest, ConvertsAPayloadReceivedInPieces) {
  const Batch whole = MakeHwcBatch(2, 3, 4, 3);
  // The same bytes as a received payload in three pieces (wire/batch_payload.h).
  auto bytes = std::make_shared<std::string>(whole.bytes().begin(), whole.bytes().end());
  const auto* at = reinterpret_cast<const uint8_t*>(bytes->data());
  std::vector<BatchPayload::Chunk> chunks = {{at, 10}, {at + 10, 30}, {at + 40, 32}};
  auto header = std::make_shared<v1::BatchMessage>();
  *header->mutable_header() = whole.header();
  const Batch pieces(ReceivedBatch{header, std::make_shared<BatchPayload>(chunks, bytes, nullptr)});
  auto feeder = DeviceFeeder::Create(DeviceOptions());
  ASSERT_TRUE(feeder.ok());
  absl::StatusOr<DeviceTensor> expected = (*feeder)->Convert(whole);
  absl::StatusOr<DeviceTensor> got = (*feeder)->Convert(pieces);
  ASSERT_TRUE(expected.ok() && got.ok());
  EXPECT_EQ(std::vector<float>(got->data(), got->data() + 72),
            std::vector<float>(expected->data(), expected->data() + 72));
}

TEST(HostFeederTest, HoldsAtMostResidentBatches) {
  DeviceOptions options;
  options.resident_batches = 2;
  auto feeder = DeviceFeeder::Create(options);
  ASSERT_TRUE(feeder.ok());
  absl::StatusOr<DeviceTensor> first = (*feeder)->Convert(MakeHwcBatch(1, 2, 2, 3));
  absl::StatusOr<DeviceTensor> second = (*feeder)->Convert(MakeHwcBatch(1, 2, 2, 3));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->data(), second->data());

  absl::Notification converted;
  std::thread third([&] {
    absl::StatusOr<DeviceTensor> tensor = (*feeder)->Convert(MakeHwcBatch(1, 2, 2, 3));
    EXPECT_TRUE(tensor.ok());
    converted.Notify();
  });
  // The third waits for a slot; releasing the first lets it through.
  EXPECT_FALSE(converted.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  first->Release();
  third.join();
  EXPECT_TRUE(converted.HasBeenNotified());
}

TEST(HostFeederTest, StopWakesWaiters) {
  DeviceOptions options;
  options.resident_batches = 1;
  auto feeder = DeviceFeeder::Create(options);
  ASSERT_TRUE(feeder.ok());
  absl::StatusOr<DeviceTensor> held = (*feeder)->Convert(MakeHwcBatch(1, 1, 1, 1));
  ASSERT_TRUE(held.ok());
  std::thread waiter([&] {
    EXPECT_EQ((*feeder)->Convert(MakeHwcBatch(1, 1, 1, 1)).status().code(),
              absl::StatusCode::kCancelled);
  });
  (*feeder)->Stop();
  waiter.join();
}

TEST(DeviceFeederTest, CudaWithoutAUsableDeviceIsFailedPrecondition) {
  DeviceOptions options;
  options.device = "cuda:7";
  auto feeder = DeviceFeeder::Create(options);
  if (feeder.ok()) GTEST_SKIP() << "a machine with eight GPUs";
  EXPECT_EQ(feeder.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(feeder.status().message()), HasSubstr("cuda:7"));
}

}  // namespace
}  // namespace stoker
