// BatchToByteBuffer: the bytes parse back to the same message, the payload slice is the
// producer's buffer (not a copy), and the message returns to the pool only when every reference
// to the buffer is gone.

#include "worker/batch_wire_encoder.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

std::unique_ptr<pb::BatchMessage> SampleBatch(size_t payload_bytes) {
  auto message = std::make_unique<pb::BatchMessage>();
  pb::BatchHeader* header = message->mutable_header();
  header->mutable_task()->set_job_id(3);
  header->mutable_task()->set_batch_index(17);
  for (int i = 0; i < 4; ++i) {
    header->add_sample_indices(100 + i);
    header->add_labels(i);
  }
  for (int64_t dim : {4, 2, 3, 5}) header->add_shape(dim);
  header->set_dtype(pb::DTYPE_FLOAT16);
  (*header->mutable_bad_samples())["read_error"] = 1;
  std::string* data = message->mutable_data();
  data->resize(payload_bytes);
  for (size_t i = 0; i < payload_bytes; ++i) (*data)[i] = static_cast<char>(i * 131 + 7);
  return message;
}

std::vector<grpc::Slice> SlicesOf(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  return slices;
}

TEST(BatchWireTest, ParsesBackToTheSameMessageWithoutCopyingThePayload) {
  for (size_t payload : {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{300000}}) {
    std::unique_ptr<pb::BatchMessage> message = SampleBatch(payload);
    const std::string expected = message->SerializeAsString();
    const char* payload_address = message->data().data();
    std::unique_ptr<pb::BatchMessage> recycled;
    int recycles = 0;
    {
      grpc::ByteBuffer buffer = BatchToByteBuffer(
          OutgoingBatch{std::move(message), nullptr},
          [&](std::unique_ptr<pb::BatchMessage> m) {
            recycled = std::move(m);
            ++recycles;
          },
          [](std::unique_ptr<PayloadBuffer>) { ADD_FAILURE() << "no encoded buffer to recycle"; });
      if (payload > 0) {
        const std::vector<grpc::Slice> slices = SlicesOf(buffer);
        ASSERT_EQ(slices.size(), 2u);
        EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), payload_address)
            << "the payload slice must be the producer's buffer";
        EXPECT_EQ(recycles, 0) << "recycled while gRPC still references the payload";
      }
      grpc::ByteBuffer copy = buffer;  // gRPC's send path takes such references
      pb::BatchMessage parsed;
      ASSERT_TRUE(grpc::SerializationTraits<pb::BatchMessage>::Deserialize(&buffer, &parsed).ok());
      EXPECT_EQ(parsed.SerializeAsString(), expected) << payload << " payload bytes";
      EXPECT_EQ(recycles, payload > 0 ? 0 : 1);
    }
    EXPECT_EQ(recycles, 1);
    ASSERT_NE(recycled, nullptr);
    EXPECT_EQ(recycled->data().size(), payload);  // returned whole, capacity kept
  }
}

TEST(BatchWireTest, ReleasedPayloadGoesBackToThePool) {
  MessagePool pool(2);
  PayloadBufferPool buffers(2);
  std::unique_ptr<pb::BatchMessage> message = SampleBatch(1000);
  const pb::BatchMessage* address = message.get();
  grpc::ByteBuffer buffer = BatchToByteBuffer(OutgoingBatch{std::move(message), nullptr},
                                              pool.recycler(), buffers.recycler());
  std::unique_ptr<pb::BatchMessage> fresh = pool.Get();
  EXPECT_NE(fresh.get(), address) << "in the pool while gRPC still holds it";
  buffer.Clear();
  std::unique_ptr<pb::BatchMessage> reused = pool.Get();
  EXPECT_EQ(reused.get(), address);
  EXPECT_GE(reused->data().capacity(), 1000u);
}

TEST(BatchWireTest, SendsTheEncodedPayloadFromItsBufferAndRecyclesBoth) {
  MessagePool pool(2);
  PayloadBufferPool buffers(2);
  pb::CompressionChoice lz4;
  lz4.set_codec(pb::COMPRESSION_LZ4);
  absl::StatusOr<OutgoingBatch> batch = EncodeBatch(SampleBatch(300000), lz4, &buffers);
  ASSERT_TRUE(batch.ok()) << batch.status();
  const std::string raw = batch->message->data();
  const PayloadBuffer* encoded = batch->encoded.get();
  const size_t wire = batch->wire_bytes();
  grpc::ByteBuffer buffer =
      BatchToByteBuffer(*std::move(batch), pool.recycler(), buffers.recycler());
  {
    const std::vector<grpc::Slice> slices = SlicesOf(buffer);
    ASSERT_EQ(slices.size(), 2u);
    EXPECT_EQ(slices[1].begin(), encoded->data()) << "the payload slice must be the encoded buffer";
    EXPECT_EQ(slices[1].size(), wire);
  }
  pb::BatchMessage parsed;
  ASSERT_TRUE(grpc::SerializationTraits<pb::BatchMessage>::Deserialize(&buffer, &parsed).ok());
  EXPECT_EQ(parsed.header().compression(), pb::COMPRESSION_LZ4);
  EXPECT_EQ(parsed.header().uncompressed_bytes(), raw.size());
  std::string decoded(raw.size(), '\0');
  ASSERT_TRUE(
      DecompressPayload(pb::COMPRESSION_LZ4,
                        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(parsed.data().data()),
                                            parsed.data().size()),
                        absl::MakeSpan(reinterpret_cast<uint8_t*>(decoded.data()), decoded.size()))
          .ok());
  EXPECT_EQ(decoded, raw);
  buffer.Clear();
  EXPECT_EQ(buffers.Get().get(), encoded) << "the encoded buffer returned to its pool";
}

}  // namespace
}  // namespace stoker
