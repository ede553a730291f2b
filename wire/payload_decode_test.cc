// DecodeReceivedBatch: a header or a compressed frame that lies about its size is DATA_LOSS
// naming the worker and the field, refused before a buffer of the announced size is made.

#include "wire/payload_decode.h"

#include <memory>
#include <string>

#include "common/payload_codec.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/testing/batch_messages.h"

namespace stoker {
namespace {

using ::stoker::testing::MakeBatchMessage;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kWorker[] = "10.0.0.7:7001";

class PayloadDecodeTest : public ::testing::Test {
 protected:
  absl::StatusOr<DecodedBatch> Decode(std::shared_ptr<v1::BatchMessage> message,
                                      uint64_t max_raw_bytes = 1 << 20) {
    return DecodeReceivedBatch(ReceivedBatch::FromMessage(std::move(message)), kWorker,
                               max_raw_bytes, headers_.get(), buffers_.get());
  }

  std::shared_ptr<MessagePool> headers_ = std::make_shared<MessagePool>(2);
  std::shared_ptr<BufferPool> buffers_ = std::make_shared<BufferPool>(2);
};

// MakeBatchMessage's batch (2 samples of 3 bytes) with its payload compressed by `codec`.
std::shared_ptr<v1::BatchMessage> Compressed(v1::Compression codec) {
  return testing::MakeCompressedBatchMessage(1, 0, 4, codec);
}

TEST_F(PayloadDecodeTest, HonestBatchesDecode) {
  absl::StatusOr<DecodedBatch> raw = Decode(MakeBatchMessage(1, 0, 4));
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->raw_bytes, 6u);
  for (v1::Compression codec : {v1::COMPRESSION_LZ4, v1::COMPRESSION_ZSTD}) {
    absl::StatusOr<DecodedBatch> decoded = Decode(Compressed(codec));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->batch.payload->size(), 6u);
  }
}

TEST_F(PayloadDecodeTest, ARawPayloadSmallerThanTheShapeIsDataLossNamingTheWorker) {
  std::shared_ptr<v1::BatchMessage> message = MakeBatchMessage(1, 0, 4);
  message->mutable_data()->resize(5);
  EXPECT_THAT(Decode(message), StatusIs(absl::StatusCode::kDataLoss,
                                        AllOf(HasSubstr("batch 4 from worker 10.0.0.7:7001"),
                                              HasSubstr("header.shape"))));
}

// Typed target columns are checked on receipt (wire/target_check.h): a box of 12 bytes is
// refused before the trainer sees it.
TEST_F(PayloadDecodeTest, ARaggedTypedTargetIsDataLossNamingTheWorker) {
  std::shared_ptr<v1::BatchMessage> message = MakeBatchMessage(1, 0, 4);
  v1::FieldColumn* boxes = message->mutable_header()->add_fields();
  boxes->set_name("boxes");
  for (uint64_t offset : {6, 22, 34}) boxes->add_offsets(offset);  // 16 bytes, then 12
  message->mutable_data()->append(28, '\0');
  EXPECT_THAT(Decode(message),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("batch 4 from worker 10.0.0.7:7001"),
                             HasSubstr("header.fields[0] (\"boxes\") value 1: 12 bytes"))));
  message->mutable_data()->resize(6 + 32);
  boxes->set_offsets(2, 38);
  EXPECT_TRUE(Decode(message).ok());
}

TEST_F(PayloadDecodeTest, AnnouncingMoreThanABatchIsRefusedBeforeAllocating) {
  std::shared_ptr<v1::BatchMessage> message = Compressed(v1::COMPRESSION_ZSTD);
  message->mutable_header()->set_uncompressed_bytes(uint64_t{1} << 50);
  EXPECT_THAT(Decode(message),
              StatusIs(absl::StatusCode::kDataLoss, AllOf(HasSubstr("from worker 10.0.0.7:7001"),
                                                          HasSubstr("header.uncompressed_bytes"))));
}

TEST_F(PayloadDecodeTest, AnnouncedSizeOtherThanTheShapeIsRefusedBeforeAllocating) {
  // Inside the job's bound, but not what the shape holds: nothing is sized by it.
  for (v1::Compression codec : {v1::COMPRESSION_LZ4, v1::COMPRESSION_ZSTD}) {
    std::shared_ptr<v1::BatchMessage> message = Compressed(codec);
    message->mutable_header()->set_uncompressed_bytes(1000);
    EXPECT_THAT(Decode(message),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("from worker 10.0.0.7:7001"),
                               HasSubstr("header.shape: [2, 1, 1, 3] of 1-byte elements is 6 "
                                         "bytes, the payload 1000"))));
    EXPECT_EQ(buffers_->free_count(), 0u);  // no buffer was taken
  }
}

TEST_F(PayloadDecodeTest, AFrameHoldingOtherThanTheHeaderSaysIsDataLoss) {
  // The header and shape agree on 8 bytes; the frame says (and holds) 6.
  for (v1::Compression codec : {v1::COMPRESSION_LZ4, v1::COMPRESSION_ZSTD}) {
    std::shared_ptr<v1::BatchMessage> message = Compressed(codec);
    v1::BatchHeader* header = message->mutable_header();
    header->set_shape(3, 4);
    header->set_uncompressed_bytes(8);
    EXPECT_THAT(Decode(message), StatusIs(absl::StatusCode::kDataLoss,
                                          AllOf(HasSubstr("from worker 10.0.0.7:7001"),
                                                HasSubstr("the frame holds 6 bytes, the header "
                                                          "announced 8"))));
  }
}

}  // namespace
}  // namespace stoker
