// The Loader with compressed streams: what it asks at open, decoding, a payload that does not
// decode or a header that lies about it (the stream ends unacknowledged and the batch comes
// again), and auto's requests.

#include <memory>
#include <string>

#include "common/payload_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/loader.h"
#include "trainer_client/testing/fake_env.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker {
namespace {

using ::stoker::testing::FakeStream;
using ::stoker::testing::kJob;
using ::stoker::testing::LoaderTest;
using ::stoker::testing::MakeBatchMessage;

// MakeBatchMessage's batch with its payload compressed by `codec`.
std::shared_ptr<v1::BatchMessage> Compressed(uint32_t epoch, uint64_t index,
                                             v1::Compression codec) {
  return ::stoker::testing::MakeCompressedBatchMessage(kJob, epoch, index, codec);
}

using LoaderCompressionTest = LoaderTest;

TEST_F(LoaderCompressionTest, AsksForTheChosenCodecAtOpen) {
  options_.compression = "zstd:3";
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  std::shared_ptr<FakeStream> stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->open().compression().codec(), v1::COMPRESSION_ZSTD);
  EXPECT_EQ(stream->open().compression().level(), 3);
}

TEST_F(LoaderCompressionTest, NoneAndAutoAskNothingAtOpen) {
  for (const char* name : {"none", "auto"}) {
    options_.compression = name;
    options_.job_name = std::string("job-") + name;
    coordinator_->AddWorker(1, "w1:1");
    auto loader = OpenOrDie();
    ASSERT_NE(loader, nullptr);
    std::shared_ptr<FakeStream> stream = streams_->AwaitStream(streams_->stream_count() - 1);
    ASSERT_NE(stream, nullptr);
    EXPECT_FALSE(stream->open().has_compression()) << name;
  }
}

TEST_F(LoaderCompressionTest, DecodesCompressedBatchesToTheSameBytes) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  std::shared_ptr<FakeStream> stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  const std::string expected = MakeBatchMessage(kJob, 0, 0)->data();
  stream->Deliver(Compressed(0, 0, v1::COMPRESSION_LZ4));
  stream->Deliver(Compressed(0, 1, v1::COMPRESSION_ZSTD));
  for (uint64_t index : {0, 1}) {
    absl::StatusOr<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(batch->batch_index(), index);
    EXPECT_EQ(batch->header().compression(), v1::COMPRESSION_NONE);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(batch->data()), batch->size_bytes()),
              MakeBatchMessage(kJob, 0, index)->data());
  }
  EXPECT_TRUE(stream->AwaitAcks(2));
  const LoaderStats stats = loader->stats();
  ASSERT_EQ(stats.workers.size(), 1u);
  EXPECT_EQ(stats.workers[0].bytes, 12u);
  EXPECT_GT(stats.workers[0].wire_bytes, 12u);  // frames of 6 bytes are larger than the bytes
  EXPECT_EQ(stats.corrupt_payloads, 0u);
}

TEST_F(LoaderCompressionTest, ACorruptPayloadEndsItsStreamUnacknowledgedAndTheBatchComesAgain) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  std::shared_ptr<FakeStream> first = streams_->AwaitStream(0);
  ASSERT_NE(first, nullptr);
  std::shared_ptr<v1::BatchMessage> corrupt = Compressed(0, 0, v1::COMPRESSION_LZ4);
  corrupt->mutable_data()->resize(corrupt->data().size() - 2);  // truncated
  first->Deliver(corrupt);
  first->Deliver(MakeBatchMessage(kJob, 0, 1));  // after the failure: dropped, not acked
  ASSERT_TRUE(Heartbeats(1));
  EXPECT_TRUE(first->ended());
  EXPECT_TRUE(first->acks().empty());
  EXPECT_EQ(loader->stats().corrupt_payloads, 1u);
  // The worker handed both back; they come again on a new stream.
  std::shared_ptr<FakeStream> second;
  for (int i = 0; i < 20 && second == nullptr; ++i) {
    ASSERT_TRUE(Heartbeats(1));
    if (streams_->stream_count() > 1) second = streams_->AwaitStream(1);
  }
  ASSERT_NE(second, nullptr);
  second->Deliver(Compressed(0, 0, v1::COMPRESSION_LZ4));
  second->Deliver(MakeBatchMessage(kJob, 0, 1));
  for (uint64_t index : {0, 1}) {
    absl::StatusOr<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(batch->batch_index(), index);
  }
  EXPECT_TRUE(second->AwaitAcks(2));
}

TEST_F(LoaderCompressionTest, APayloadAnnouncingMoreThanABatchIsDataLossNotAnAllocation) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  std::shared_ptr<FakeStream> stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  std::shared_ptr<v1::BatchMessage> huge = Compressed(0, 0, v1::COMPRESSION_ZSTD);
  huge->mutable_header()->set_uncompressed_bytes(uint64_t{1} << 50);
  stream->Deliver(huge);
  ASSERT_TRUE(Heartbeats(1));
  EXPECT_TRUE(stream->ended());
  EXPECT_EQ(loader->stats().corrupt_payloads, 1u);
}

TEST_F(LoaderCompressionTest, AHeaderLyingAboutThePayloadEndsItsStreamUnacknowledged) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  std::shared_ptr<FakeStream> stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  std::shared_ptr<v1::BatchMessage> lying = MakeBatchMessage(kJob, 0, 0);
  lying->mutable_header()->set_shape(1, 1 << 20);  // 6 MiB claimed over a 6-byte payload
  stream->Deliver(lying);
  ASSERT_TRUE(Heartbeats(1));
  EXPECT_TRUE(stream->ended());
  EXPECT_TRUE(stream->acks().empty());
  EXPECT_EQ(loader->stats().corrupt_payloads, 1u);
  EXPECT_EQ(loader->stats().batches_received, 0u);
}

TEST_F(LoaderCompressionTest, AutoAsksTheWorkerForItsCodecOnceTheLinkLimits) {
  options_.compression = "auto";
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  std::shared_ptr<FakeStream> stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  int delivered = 0;
  for (uint32_t epoch : {0u, 1u}) {
    for (uint64_t index : {0u, 1u}) {
      std::shared_ptr<v1::BatchMessage> batch = MakeBatchMessage(kJob, epoch, index);
      batch->mutable_header()->add_offered_compression(v1::COMPRESSION_LZ4);
      batch->mutable_header()->set_producer_threads(1);
      batch->mutable_header()->set_produce_seconds(0.001);
      batch->mutable_header()->set_sent_back_to_back(true);
      clock_.Advance(absl::Seconds(1));  // 6 bytes a second: a very slow link
      stream->Deliver(batch);
      ++delivered;
      // Raw batches only, until the fourth shows the link limits: then lz4 is asked for.
      EXPECT_EQ(stream->compression_requests().size(), delivered < 4 ? 0u : 1u);
    }
  }
  ASSERT_EQ(stream->compression_requests().size(), 1u);
  EXPECT_EQ(stream->compression_requests()[0].codec(), v1::COMPRESSION_LZ4);
}

}  // namespace
}  // namespace stoker
