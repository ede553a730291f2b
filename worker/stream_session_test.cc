#include "worker/stream_session.h"

#include <vector>

#include "common/payload_codec.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

class SentBatchesSink : public BatchSink {
 public:
  void Send(OutgoingBatch batch) override { sent.push_back(std::move(batch)); }
  void Fail(const absl::Status& status) override { failure = status; }
  std::vector<OutgoingBatch> sent;
  absl::Status failure;
};

class StreamSessionTest : public ::testing::Test {
 protected:
  StreamSessionTest()
      : pool_(4), session_(nullptr, 0, "client", &sink_, &pool_, [this] { ++wakes_; }) {}

  uint32_t Wanted(absl::Time now, uint64_t max_held = UINT64_MAX) {
    absl::Time next = absl::InfiniteFuture();
    return session_.WantedTasks(now, &next, max_held);
  }

  SentBatchesSink sink_;
  MessagePool pool_;
  int wakes_ = 0;
  StreamSession session_;
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(StreamSessionTest, WantsCreditMinusOutstanding) {
  EXPECT_EQ(Wanted(t0_), 0u);
  session_.AddCredit(5);
  EXPECT_EQ(wakes_, 1);
  EXPECT_EQ(Wanted(t0_), 5u);
  session_.OnLeased(3, t0_, absl::Seconds(1));
  EXPECT_EQ(Wanted(t0_), 2u);
  session_.OnSent(0);  // Consumes a credit and a lease.
  EXPECT_EQ(Wanted(t0_), 2u);
  EXPECT_EQ(wakes_, 2);
}

TEST_F(StreamSessionTest, EmptyLeaseBacksOffDoublingUpToMax) {
  session_.AddCredit(1);
  session_.OnLeased(0, t0_, absl::Milliseconds(12));
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(4)), 0u);
  absl::Time next = absl::InfiniteFuture();
  EXPECT_EQ(session_.WantedTasks(t0_, &next, UINT64_MAX), 0u);
  EXPECT_EQ(next, t0_ + absl::Milliseconds(5));
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(5)), 1u);
  session_.OnLeased(0, t0_, absl::Milliseconds(12));  // 10 ms.
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(9)), 0u);
  session_.OnLeased(0, t0_, absl::Milliseconds(12));  // Capped at 12 ms.
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(11)), 0u);
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(12)), 1u);
  session_.OnLeased(1, t0_, absl::Milliseconds(12));  // A grant resets the backoff.
  session_.AddCredit(1);
  EXPECT_EQ(Wanted(t0_), 1u);
}

TEST_F(StreamSessionTest, ProducedBatchesGoToSinkUntilDetached) {
  session_.OnProduced(absl::OkStatus(), std::make_unique<pb::BatchMessage>());
  EXPECT_EQ(sink_.sent.size(), 1u);
  session_.OnProduced(absl::InternalError("kernel failed"), nullptr);
  EXPECT_EQ(sink_.failure.code(), absl::StatusCode::kInternal);
  session_.Detach();
  EXPECT_TRUE(session_.detached());
  session_.OnProduced(absl::OkStatus(), std::make_unique<pb::BatchMessage>());
  EXPECT_EQ(sink_.sent.size(), 1u);
  session_.AddCredit(3);
  EXPECT_EQ(Wanted(t0_), 0u);  // Detached sessions lease nothing.
}

TEST_F(StreamSessionTest, HugeCreditIsCappedByWhatTheWorkerLetsItHold) {
  session_.AddCredit(UINT32_MAX);
  session_.AddCredit(UINT32_MAX);
  EXPECT_EQ(Wanted(t0_, /*max_held=*/8), 8u);
  session_.OnLeased(8, t0_, absl::Seconds(1));
  EXPECT_EQ(session_.held_tasks(), 8u);
  EXPECT_EQ(Wanted(t0_, 8), 0u) << "a client that never reads holds no more than its share";
  session_.OnSent(0);
  EXPECT_EQ(Wanted(t0_, 8), 1u);
  EXPECT_EQ(Wanted(t0_, 4), 0u) << "a smaller share (more streams) leases nothing more";
}

// A produced batch of `task`, as the producer hands it to the session.
std::unique_ptr<pb::BatchMessage> BatchOf(uint64_t batch_index) {
  auto batch = std::make_unique<pb::BatchMessage>();
  batch->mutable_header()->mutable_task()->set_job_id(5);
  batch->mutable_header()->mutable_task()->set_batch_index(batch_index);
  return batch;
}

pb::Ack AckOf(std::vector<uint64_t> batch_indices) {
  pb::Ack ack;
  for (uint64_t index : batch_indices) {
    pb::TaskId* task = ack.add_tasks();
    task->set_job_id(5);
    task->set_batch_index(index);
  }
  return ack;
}

TEST_F(StreamSessionTest, AcceptsAcksOfSentTasksOnly) {
  session_.OnProduced(absl::OkStatus(), BatchOf(1));
  session_.OnProduced(absl::OkStatus(), BatchOf(2));
  google::protobuf::RepeatedPtrField<pb::TaskId> accepted;
  EXPECT_THAT(session_.Acknowledge(AckOf({2, 1}), &accepted), IsOk());
  EXPECT_EQ(accepted.size(), 2);

  accepted.Clear();
  session_.OnProduced(absl::OkStatus(), BatchOf(3));
  EXPECT_THAT(
      session_.Acknowledge(AckOf({3, 7, 3}), &accepted),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::AllOf(::testing::HasSubstr("ack.tasks"), ::testing::HasSubstr("batch 7"),
                                ::testing::HasSubstr("not sent on this stream"))));
  ASSERT_EQ(accepted.size(), 1) << "the tasks before the bad one count";
  EXPECT_EQ(accepted[0].batch_index(), 3u);
}

TEST_F(StreamSessionTest, ADoubleAckIsRefusedUnlessTheTaskWasSentTwice) {
  session_.OnProduced(absl::OkStatus(), BatchOf(1));
  google::protobuf::RepeatedPtrField<pb::TaskId> accepted;
  ASSERT_THAT(session_.Acknowledge(AckOf({1}), &accepted), IsOk());
  EXPECT_THAT(
      session_.Acknowledge(AckOf({1}), &accepted),
      StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("already acknowledged")));

  session_.OnProduced(absl::OkStatus(), BatchOf(4));  // a lease revoked and leased again
  session_.OnProduced(absl::OkStatus(), BatchOf(4));
  EXPECT_THAT(session_.Acknowledge(AckOf({4, 4}), &accepted), IsOk());
  EXPECT_THAT(session_.Acknowledge(AckOf({4}), &accepted),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("batch 4")));
}

TEST_F(StreamSessionTest, LeasesNothingMoreWhileTooManyBatchesAreUnacknowledged) {
  session_.AddCredit(UINT32_MAX);
  for (uint64_t i = 0; i < StreamSession::kMaxUnackedBatches; ++i) {
    session_.OnProduced(absl::OkStatus(), BatchOf(i));
  }
  EXPECT_EQ(Wanted(t0_), 0u);
  google::protobuf::RepeatedPtrField<pb::TaskId> accepted;
  ASSERT_THAT(session_.Acknowledge(AckOf({0}), &accepted), IsOk());
  EXPECT_GT(Wanted(t0_), 0u);
}

TEST_F(StreamSessionTest, CountsQueuedAndSentBytes) {
  auto batch = std::make_unique<pb::BatchMessage>();
  batch->set_data(std::string(1000, 'x'));
  session_.OnProduced(absl::OkStatus(), std::move(batch));
  EXPECT_EQ(session_.queued_bytes(), 1000u);
  EXPECT_EQ(session_.sent_bytes(), 0u);
  session_.OnSent(sink_.sent.back().wire_bytes());
  EXPECT_EQ(session_.queued_bytes(), 0u);
  EXPECT_EQ(session_.sent_bytes(), 1000u);
}

pb::CompressionChoice Choice(pb::Compression codec, int level = 0) {
  pb::CompressionChoice choice;
  choice.set_codec(codec);
  choice.set_level(level);
  return choice;
}

std::unique_ptr<pb::BatchMessage> Batch(size_t bytes) {
  auto batch = std::make_unique<pb::BatchMessage>();
  for (size_t i = 0; i < bytes; ++i) batch->mutable_data()->push_back(static_cast<char>(i / 64));
  return batch;
}

class StreamSessionEncodingTest : public ::testing::Test {
 protected:
  std::unique_ptr<StreamSession> Session(std::vector<pb::Compression> offered,
                                         pb::CompressionChoice requested) {
    SessionEncoding encoding{std::move(offered), std::move(requested), 3, &buffers_};
    return std::make_unique<StreamSession>(
        nullptr, 0, "client", &sink_, &pool_, [] {}, std::move(encoding));
  }
  SentBatchesSink sink_;
  MessagePool pool_{4};
  PayloadBufferPool buffers_{4};
};

TEST_F(StreamSessionEncodingTest, EncodesWithTheRequestedOfferedCodecAndCountsBytes) {
  auto session = Session({pb::COMPRESSION_LZ4, pb::COMPRESSION_ZSTD}, Choice(pb::COMPRESSION_ZSTD));
  session->OnProduced(absl::OkStatus(), Batch(100000));
  ASSERT_EQ(sink_.sent.size(), 1u);
  const OutgoingBatch& sent = sink_.sent[0];
  const pb::BatchHeader& header = sent.message->header();
  EXPECT_EQ(header.compression(), pb::COMPRESSION_ZSTD);
  EXPECT_EQ(header.uncompressed_bytes(), 100000u);
  EXPECT_EQ(header.producer_threads(), 3u);
  EXPECT_THAT(header.offered_compression(),
              ::testing::ElementsAre(pb::COMPRESSION_LZ4, pb::COMPRESSION_ZSTD));
  ASSERT_NE(sent.encoded, nullptr);
  EXPECT_LT(sent.wire_bytes(), 100000u);
  std::string decoded(100000, '\0');
  ASSERT_THAT(
      DecompressPayload(pb::COMPRESSION_ZSTD,
                        absl::MakeConstSpan(sent.encoded->data(), sent.encoded->size()),
                        absl::MakeSpan(reinterpret_cast<uint8_t*>(decoded.data()), decoded.size())),
      IsOk());
  EXPECT_EQ(decoded, sent.message->data()) << "the raw payload stays in the message";
  EXPECT_EQ(session->queued_bytes(), sent.wire_bytes());
  const std::map<std::string, PayloadBytes> bytes = session->payload_bytes();
  ASSERT_EQ(bytes.count("zstd"), 1u);
  EXPECT_EQ(bytes.at("zstd").raw, 100000u);
  EXPECT_EQ(bytes.at("zstd").wire, sent.wire_bytes());
}

TEST_F(StreamSessionEncodingTest, SendsRawWhenTheCodecIsNotOfferedAndFollowsSetCompression) {
  auto session = Session({pb::COMPRESSION_LZ4}, Choice(pb::COMPRESSION_ZSTD, 3));
  EXPECT_EQ(session->compression().codec(), pb::COMPRESSION_NONE);
  session->OnProduced(absl::OkStatus(), Batch(5000));
  ASSERT_EQ(sink_.sent.size(), 1u);
  EXPECT_EQ(sink_.sent[0].message->header().compression(), pb::COMPRESSION_NONE);
  EXPECT_EQ(sink_.sent[0].encoded, nullptr);
  EXPECT_EQ(sink_.sent[0].wire_bytes(), 5000u);

  ASSERT_THAT(session->SetCompression(Choice(pb::COMPRESSION_LZ4)), IsOk());
  session->OnProduced(absl::OkStatus(), Batch(5000));
  ASSERT_EQ(sink_.sent.size(), 2u);
  EXPECT_EQ(sink_.sent[1].message->header().compression(), pb::COMPRESSION_LZ4);
  EXPECT_EQ(session->payload_bytes().at("none").raw, 5000u);

  EXPECT_THAT(
      session->SetCompression(Choice(pb::COMPRESSION_ZSTD, 40)),
      StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("set_compression.level")));
  EXPECT_THAT(
      session->SetCompression(Choice(static_cast<pb::Compression>(7))),
      StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("set_compression.codec")));
  EXPECT_EQ(session->compression().codec(), pb::COMPRESSION_LZ4);
}

TEST_F(StreamSessionEncodingTest, AWorkerOfferingNothingSendsRawAndAnnouncesNothing) {
  auto session = Session({}, Choice(pb::COMPRESSION_LZ4));
  ASSERT_THAT(session->SetCompression(Choice(pb::COMPRESSION_ZSTD)), IsOk());
  session->OnProduced(absl::OkStatus(), Batch(5000));
  ASSERT_EQ(sink_.sent.size(), 1u);
  EXPECT_EQ(sink_.sent[0].message->header().compression(), pb::COMPRESSION_NONE);
  EXPECT_EQ(sink_.sent[0].message->header().offered_compression_size(), 0);
}

}  // namespace
}  // namespace stoker
