#include "trainer_client/stream_side.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace {

constexpr uint64_t kStreamJob = 7;

// Rank 0 of job 7 (batches of 6 bytes, 8 of them in the prefetch budget) over fake streams.
class StreamSideTest : public ::testing::Test {
 protected:
  StreamSideTest() {
    options_.rank = 0;
    options_.client_id = "client-a";
    options_.prefetch_bytes = 6 * 8;
    options_.connect_backoff.initial = absl::Milliseconds(100);
    options_.connect_backoff.max = absl::Milliseconds(100);
    job_.set_job_id(kStreamJob);
    job_.set_batch_bytes(6);
  }

  std::unique_ptr<StreamSide> Make() {
    StreamSide::Callbacks callbacks;
    callbacks.on_batch = [this](StreamDelivery delivery) {
      delivered_.push_back(std::move(delivery));
    };
    callbacks.on_done = [this](StreamId id, const absl::Status&) { done_.push_back(id); };
    return std::make_unique<StreamSide>(options_, job_, &clock_, &factory_, &trace_,
                                        std::move(callbacks));
  }
  static google::protobuf::RepeatedPtrField<v1::WorkerInfo> Workers(
      const std::vector<std::string>& addresses) {
    google::protobuf::RepeatedPtrField<v1::WorkerInfo> workers;
    for (const std::string& address : addresses) workers.Add()->set_address(address);
    return workers;
  }
  static Batch BatchOf(uint64_t index) {
    return Batch(::stoker::testing::MakeBatchMessage(kStreamJob, 0, index, /*worker_id=*/5));
  }

  LoaderOptions options_;
  v1::OpenJobResponse job_;
  FakeClock clock_;
  ::stoker::testing::FakeWorkerStreamFactory factory_;
  ClientTrace trace_;
  std::vector<StreamDelivery> delivered_;
  std::vector<StreamId> done_;
};

TEST_F(StreamSideTest, OpensOneStreamPerListedWorkerThatOnlyWorkersAllows) {
  options_.only_workers = {"b:1"};
  auto streams = Make();
  streams->Reconcile(Workers({"a:1", "b:1"}), /*open_new=*/true);
  streams->Reconcile(Workers({"a:1", "b:1"}), /*open_new=*/true);  // already open
  ASSERT_EQ(factory_.stream_count(), 1u);
  const auto stream = factory_.AwaitStream(0);
  EXPECT_EQ(stream->address(), "b:1");
  EXPECT_EQ(stream->open().job_id(), kStreamJob);
  EXPECT_EQ(stream->open().client_id(), "client-a");
}

TEST_F(StreamSideTest, OpensNothingOnceEverythingWasReceived) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), /*open_new=*/false);
  EXPECT_EQ(factory_.stream_count(), 0u);
}

TEST_F(StreamSideTest, AStreamThatEndsEarlyIsReopenedAfterItsBackoff) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), true);
  streams->OnDone(1, absl::UnavailableError("worker died"), /*stopping=*/false,
                  /*all_received=*/false);
  streams->Reconcile(Workers({"a:1"}), true);
  EXPECT_EQ(factory_.stream_count(), 1u);  // backing off
  clock_.Advance(absl::Seconds(1));
  streams->Reconcile(Workers({"a:1"}), true);
  EXPECT_EQ(factory_.stream_count(), 2u);
  LoaderStats stats;
  streams->AddStats(&stats);
  EXPECT_EQ(stats.streams_opened, 2u);
  EXPECT_EQ(stats.stream_failures, 1u);
}

TEST_F(StreamSideTest, AnEndAfterTheLastBatchIsNoFailure) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), true);
  streams->OnDone(1, absl::OkStatus(), /*stopping=*/false, /*all_received=*/true);
  LoaderStats stats;
  streams->AddStats(&stats);
  EXPECT_EQ(stats.stream_failures, 0u);
  EXPECT_TRUE(streams->all_done());
}

TEST_F(StreamSideTest, AcknowledgesAcceptedAndDuplicateBatchesAndCountsThemPerWorker) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), true);
  const auto stream = factory_.AwaitStream(0);
  streams->OnAccepted(1, BatchOf(0), /*wire_bytes=*/4);
  streams->OnDuplicate(1, BatchOf(0).header().task());
  ASSERT_EQ(stream->acks().size(), 2u);
  LoaderStats stats;
  streams->AddStats(&stats);
  ASSERT_EQ(stats.workers.size(), 1u);
  EXPECT_EQ(stats.workers[0].worker_id, 5u);
  EXPECT_EQ(stats.workers[0].address, "a:1");
  EXPECT_EQ(stats.workers[0].batches, 1u);
  EXPECT_EQ(stats.workers[0].wire_bytes, 4u);
}

TEST_F(StreamSideTest, GrantsTheBudgetAsCredit) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), true);
  streams->GrantCredits(ConsumerView{});
  EXPECT_EQ(factory_.AwaitStream(0)->credits(), 8u);
}

TEST_F(StreamSideTest, TheReceivePathDecodesAndHandsTheBatchOn) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), true);
  factory_.AwaitStream(0)->Deliver(::stoker::testing::MakeBatchMessage(kStreamJob, 0, 1));
  ASSERT_EQ(delivered_.size(), 1u);
  EXPECT_EQ(delivered_[0].stream, 1u);
  ASSERT_TRUE(delivered_[0].decoded.ok()) << delivered_[0].decoded.status();
  EXPECT_EQ(delivered_[0].decoded->wire_bytes, 6u);
  EXPECT_FALSE(delivered_[0].sampled);
}

TEST_F(StreamSideTest, AStreamWithACorruptPayloadDropsItsBatchesAndIsCancelled) {
  auto streams = Make();
  streams->Reconcile(Workers({"a:1"}), true);
  streams->Fail(1, absl::DataLossError("worker a:1: bad payload"));
  EXPECT_FALSE(streams->OnBatch(1, DecodedBatch{}));
  StreamSide::Ended ended = streams->TakeEnded();
  ASSERT_EQ(ended.failing.size(), 1u);
  ended.CancelAndJoin();
  EXPECT_TRUE(factory_.AwaitStream(0)->ended());
  EXPECT_THAT(done_, ::testing::ElementsAre(1u));
  LoaderStats stats;
  streams->AddStats(&stats);
  EXPECT_EQ(stats.corrupt_payloads, 1u);
}

}  // namespace
}  // namespace stoker
