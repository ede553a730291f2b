// SplitBatchWire: the header fields parse as protobuf would, the payload is views of the input
// slices (not copies), whatever the slicing; malformed bytes are DATA_LOSS naming the offset.

#include "wire/batch_wire_splitter.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {
namespace {

using Bytes = absl::Span<const uint8_t>;
using ::testing::HasSubstr;

v1::BatchMessage SampleMessage(size_t payload_bytes) {
  v1::BatchMessage message;
  v1::BatchHeader* header = message.mutable_header();
  header->mutable_task()->set_job_id(7);
  header->mutable_task()->set_epoch(2);
  header->mutable_task()->set_batch_index(11);
  for (int64_t dim : {2, 3, 3, 1}) header->add_shape(dim);
  for (int64_t label : {4, 5}) header->add_labels(label);
  header->set_dtype(v1::DTYPE_UINT8);
  header->set_produce_seconds(0.25);
  std::string data(payload_bytes, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 1);
  message.set_data(data);
  return message;
}

// `bytes` cut into slices of the given lengths (the last takes the rest).
std::vector<Bytes> Cut(const std::string& bytes, const std::vector<size_t>& lengths) {
  std::vector<Bytes> slices;
  const auto* at = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t left = bytes.size();
  for (size_t length : lengths) {
    const size_t n = std::min(length, left);
    slices.emplace_back(at, n);
    at += n;
    left -= n;
  }
  slices.emplace_back(at, left);
  return slices;
}

std::string Join(const std::vector<Bytes>& chunks) {
  std::string out;
  for (const Bytes& chunk : chunks) out.append(chunk.begin(), chunk.end());
  return out;
}

bool Within(const Bytes& chunk, const std::string& buffer) {
  const auto* begin = reinterpret_cast<const uint8_t*>(buffer.data());
  return chunk.data() >= begin && chunk.data() + chunk.size() <= begin + buffer.size();
}

absl::Status SplitError(const std::string& bytes) {
  const Bytes whole(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return SplitBatchWire(absl::MakeConstSpan(&whole, 1)).status();
}

TEST(SplitBatchWireTest, HeaderParsesAndPayloadViewsTheSlicesHoweverCut) {
  const v1::BatchMessage message = SampleMessage(1000);
  const std::string wire = message.SerializeAsString();
  const std::vector<std::vector<size_t>> cuts = {
      {}, {1}, {3, 1, 1}, {40, 500, 17}, {static_cast<size_t>(wire.size() - 1)}};
  std::vector<size_t> ones(wire.size(), 1);  // every byte its own slice
  for (const std::vector<size_t>& lengths : {cuts[0], cuts[1], cuts[2], cuts[3], cuts[4], ones}) {
    const std::vector<Bytes> slices = Cut(wire, lengths);
    absl::StatusOr<BatchWireParts> parts = SplitBatchWire(slices);
    ASSERT_TRUE(parts.ok()) << parts.status();
    v1::BatchMessage header;
    ASSERT_TRUE(header.ParseFromString(parts->header_bytes));
    EXPECT_EQ(header.header().SerializeAsString(), message.header().SerializeAsString());
    EXPECT_TRUE(header.data().empty());
    EXPECT_EQ(Join(parts->payload), message.data());
    for (const Bytes& chunk : parts->payload) {
      EXPECT_FALSE(chunk.empty());
      EXPECT_TRUE(Within(chunk, wire));  // a view, not a copy
    }
  }
}

TEST(SplitBatchWireTest, OnePieceOfPayloadIsOneView) {
  const v1::BatchMessage message = SampleMessage(4096);
  const std::string wire = message.SerializeAsString();
  const std::string header_only = SampleMessage(0).SerializeAsString();
  // The payload's bytes all lie in the second slice, as with the worker's wire form.
  const std::vector<Bytes> slices = Cut(wire, {wire.size() - 4096});
  absl::StatusOr<BatchWireParts> parts = SplitBatchWire(slices);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->payload.size(), 1u);
  EXPECT_EQ(parts->payload[0].data(), slices[1].data());
  EXPECT_EQ(parts->header_bytes, header_only);
}

TEST(SplitBatchWireTest, FieldsInAnyOrderLastDataWinsHeadersMergeUnknownFieldsKept) {
  v1::BatchMessage first;
  first.mutable_header()->mutable_task()->set_job_id(3);
  first.set_data("old");
  v1::BatchMessage second;
  second.mutable_header()->add_labels(9);
  second.set_data("new payload");
  // data, header, [unknown varint 99, fixed32 100, fixed64 101], data, header.
  std::string unknown;
  unknown += "\x98\x06\x05";                                       // field 99, varint 5
  unknown += std::string("\xa5\x06\x01\x02\x03\x04", 6);           // field 100, fixed32
  unknown += std::string("\xa9\x06", 2) + std::string(8, '\x07');  // field 101, fixed64
  const std::string wire = first.SerializeAsString() + unknown + second.SerializeAsString();
  absl::StatusOr<BatchWireParts> parts = SplitBatchWire(Cut(wire, {5, 5, 5}));
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(Join(parts->payload), "new payload");
  v1::BatchMessage header;
  ASSERT_TRUE(header.ParseFromString(parts->header_bytes));
  v1::BatchMessage expected;  // what protobuf makes of the same bytes, but the payload
  ASSERT_TRUE(expected.ParseFromString(wire));
  expected.clear_data();
  EXPECT_EQ(header.SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(header.header().task().job_id(), 3u);
  EXPECT_THAT(header.header().labels(), ::testing::ElementsAre(9));
}

TEST(SplitBatchWireTest, NothingIsAnEmptyMessage) {
  absl::StatusOr<BatchWireParts> parts = SplitBatchWire({});
  ASSERT_TRUE(parts.ok());
  EXPECT_TRUE(parts->header_bytes.empty());
  EXPECT_TRUE(parts->payload.empty());
}

TEST(SplitBatchWireTest, MalformedBytesAreDataLossNamingTheOffset) {
  EXPECT_THAT(
      SplitError(std::string("\x08", 1)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated field 1 varint at byte 1")));
  EXPECT_THAT(SplitError(std::string("\x08\x01\x80", 3)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated tag at byte 2")));
  EXPECT_THAT(
      SplitError(std::string(10, '\xff') + "\x01"),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("tag longer than 10 bytes at byte 0")));
  // An overlong 6-byte encoding of the data tag: protobuf refuses the message, and so must this
  // (found by fuzz_batch_wire; regress_overlong_data_tag).
  const std::string overlong_data_tag("\x92\x80\x80\x80\x80\x00\x01\x00", 8);
  EXPECT_FALSE(v1::BatchMessage().ParseFromString(overlong_data_tag));
  EXPECT_THAT(
      SplitError(overlong_data_tag),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("tag longer than 5 bytes at byte 0")));
  EXPECT_THAT(SplitError(std::string("\x00\x01", 2)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("field number 0 at byte 0")));
  EXPECT_THAT(
      SplitError(std::string("\x10\x05", 2)),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("field 2 (data) has wire type 0, not length-delimited at byte 0")));
  EXPECT_THAT(SplitError(std::string("\x12\x64xyz", 5)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("field 2 truncated (100 bytes announced, 3 left) at byte 0")));
  EXPECT_THAT(SplitError(std::string("\x0a\x05\x08", 3)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("field 1 truncated (5 bytes announced, 1 left) at byte 0")));
  EXPECT_THAT(SplitError(std::string("\x08\x01\x1b", 3)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("field 3 has unsupported wire type 3 at byte 2")));
  EXPECT_THAT(SplitError(std::string("\x29\x01\x02", 3)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("field 5 truncated (8 bytes announced, 2 left) at byte 0")));
  EXPECT_THAT(
      SplitError(std::string("\x12\xff", 2)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated field 2 length at byte 1")));
}

TEST(SplitBatchWireTest, EveryTruncationIsRefusedOrEndsOnAFieldBoundary) {
  const std::string wire = SampleMessage(64).SerializeAsString();
  const size_t header_end = wire.size() - 64 - 2;  // header field, then data's tag and length
  for (size_t n = 0; n < wire.size(); ++n) {
    const absl::Status status = SplitError(wire.substr(0, n));
    if (n == 0 || n == header_end) {
      EXPECT_TRUE(status.ok()) << n << ": " << status;
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << n << ": " << status;
    }
  }
}

}  // namespace
}  // namespace stoker
