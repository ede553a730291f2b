// ReadBatch: a BatchMessage received in several gRPC slices becomes a ReceivedBatch whose payload
// views those slices (kept alive by the payload, not copied); malformed messages are DATA_LOSS.

#include "wire/grpc_batch_reader.h"

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <string>
#include <vector>

#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `wire` in slices of `piece` bytes (copies: gRPC owns them from here).
grpc::ByteBuffer Sliced(const std::string& wire, size_t piece) {
  std::vector<grpc::Slice> slices;
  for (size_t at = 0; at < wire.size(); at += piece) {
    slices.emplace_back(wire.data() + at, std::min(piece, wire.size() - at));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

v1::BatchMessage Message(size_t payload_bytes) {
  v1::BatchMessage message;
  message.mutable_header()->mutable_task()->set_batch_index(5);
  message.mutable_header()->add_labels(3);
  message.mutable_header()->add_sample_indices(42);
  message.mutable_header()->set_dtype(v1::DTYPE_UINT8);
  std::string data(payload_bytes, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 253);
  message.set_data(data);
  return message;
}

TEST(ReadBatchTest, KeepsTheReceivedSlicesAsThePayload) {
  const v1::BatchMessage message = Message(100000);
  grpc::ByteBuffer buffer = Sliced(message.SerializeAsString(), 16384);
  auto pool = std::make_shared<BufferPool>(1);
  absl::StatusOr<ReceivedBatch> batch =
      ReadBatch(&buffer, std::make_shared<v1::BatchMessage>(), pool);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(buffer.Length(), 0u);  // the batch holds the slices now, not the buffer
  const v1::BatchHeader& header = batch->header->header();
  EXPECT_EQ(header.task().batch_index(), 5u);
  EXPECT_THAT(header.labels(), ElementsAre(3));
  EXPECT_THAT(header.sample_indices(), ElementsAre(42));
  EXPECT_EQ(batch->payload->size(), 100000u);
  EXPECT_EQ(batch->payload->chunks().size(), 7u);  // 100,000 bytes across 16 KiB slices
  const std::shared_ptr<const BatchPayload> payload = batch->payload;
  batch = absl::UnknownError("dropped");  // the payload alone keeps the slices alive
  const absl::Span<const uint8_t> bytes = payload->contiguous();
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), message.data());
}

TEST(ReadBatchTest, ReusesThePooledHeaderMessage) {
  auto header = std::make_shared<v1::BatchMessage>(Message(10));  // a previous batch's
  const v1::BatchMessage* at = header.get();
  v1::BatchMessage message;
  message.mutable_header()->set_worker_id(9);
  message.set_data("xy");
  grpc::ByteBuffer buffer = Sliced(message.SerializeAsString(), 3);
  absl::StatusOr<ReceivedBatch> batch = ReadBatch(&buffer, std::move(header), nullptr);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->header.get(), at);
  EXPECT_EQ(at->header().worker_id(), 9u);
  EXPECT_TRUE(at->header().labels().empty());  // cleared before parsing
  EXPECT_TRUE(at->data().empty());             // the payload is not parsed into the message
  const absl::Span<const uint8_t> bytes = batch->payload->contiguous();
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "xy");
}

TEST(ReadBatchTest, MalformedMessagesAreDataLoss) {
  const std::string wire = Message(1000).SerializeAsString();
  grpc::ByteBuffer truncated = Sliced(wire.substr(0, wire.size() - 1), 100);
  EXPECT_THAT(ReadBatch(&truncated, std::make_shared<v1::BatchMessage>(), nullptr).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("field 2 truncated (1000 bytes announced, 999 left)")));
  // Field 1 (the header) holds bytes that are no BatchHeader: a truncated varint inside it.
  grpc::ByteBuffer bad_header = Sliced(std::string("\x0a\x02\x08\xff", 4), 1);
  EXPECT_THAT(ReadBatch(&bad_header, std::make_shared<v1::BatchMessage>(), nullptr).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("fields but data do not parse")));
}

}  // namespace
}  // namespace stoker
