#include "trainer_client/loader.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plan/resume_token.h"
#include "stoker/v1/resume.pb.h"
#include "trainer_client/loader_env.h"
#include "trainer_client/testing/fake_env.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker {
namespace {

using ::stoker::testing::FakeCoordinator;
using ::stoker::testing::FakeStream;
using ::stoker::testing::FakeWorkerStreamFactory;
using ::stoker::testing::MakeBatchMessage;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

using ::stoker::testing::kJob;
using ::stoker::testing::LoaderTest;

TEST_F(LoaderTest, OpensOneStreamPerWorkerWithItsShareOfTheBudget) {
  coordinator_->AddWorker(1, "w1:1");
  coordinator_->AddWorker(2, "w2:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(coordinator_->last_open_job_request().name(), "job");
  EXPECT_EQ(loader->job_id(), kJob);
  EXPECT_EQ(loader->batches_per_epoch(), 2u);
  EXPECT_EQ(loader->epochs(), 2u);
  EXPECT_THAT(loader->batch_shape(), ElementsAre(2, 1, 1, 3));
  std::shared_ptr<FakeStream> a = streams_->AwaitStream(0);
  std::shared_ptr<FakeStream> b = streams_->AwaitStream(1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_THAT((std::vector<std::string>{a->address(), b->address()}),
              UnorderedElementsAre("w1:1", "w2:1"));
  EXPECT_EQ(a->open().job_id(), kJob);
  EXPECT_EQ(a->open().client_id(), "client-a");
  EXPECT_EQ(a->credits(), 4u);  // 8 batches over 2 streams
  EXPECT_EQ(b->credits(), 4u);
}

TEST_F(LoaderTest, BudgetBelowOneBatchStillGrantsOnePerStream) {
  options_.prefetch_bytes = 1;
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->credits(), 1u);
}

TEST_F(LoaderTest, OnlyWorkersRestrictsStreams) {
  options_.only_workers = {"w2:1"};
  coordinator_->AddWorker(1, "w1:1");
  coordinator_->AddWorker(2, "w2:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->address(), "w2:1");
  EXPECT_TRUE(Heartbeats(3));
  EXPECT_EQ(streams_->stream_count(), 1u);
}

TEST_F(LoaderTest, DeliversEachEpochBeforeTheNextDropsDuplicatesAndEnds) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  stream->Deliver(MakeBatchMessage(kJob, 1, 0));  // early: epoch 1
  stream->Deliver(MakeBatchMessage(kJob, 0, 1));
  stream->Deliver(MakeBatchMessage(kJob, 0, 1));  // duplicate
  stream->Deliver(MakeBatchMessage(kJob, 0, 0));
  stream->Deliver(MakeBatchMessage(kJob, 1, 1));
  std::vector<Batch> got;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    got.push_back(*batch);
  }
  EXPECT_THAT(Indices(got), ElementsAre(1, 0, 0, 1));
  EXPECT_EQ(got[0].epoch(), 0u);
  EXPECT_EQ(got[1].epoch(), 0u);
  EXPECT_EQ(got[2].epoch(), 1u);
  EXPECT_EQ(got[3].epoch(), 1u);
  absl::StatusOr<Batch> end = loader->Next();
  EXPECT_EQ(end.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(end.status().message()), HasSubstr("all 2 epochs"));
  // Every arrival is acked, the duplicate too; received tasks reach the coordinator once each.
  EXPECT_EQ(stream->acks().size(), 5u);
  ASSERT_TRUE(Heartbeats(1));
  EXPECT_TRUE(coordinator_->AwaitReceived(4));
  EXPECT_EQ(coordinator_->received().size(), 4u);
  LoaderStats stats = loader->stats();
  EXPECT_EQ(stats.batches_received, 4u);
  EXPECT_EQ(stats.batches_delivered, 4u);
  EXPECT_EQ(stats.duplicates_dropped, 1u);
  ASSERT_EQ(stats.workers.size(), 1u);
  EXPECT_EQ(stats.workers[0].worker_id, 1u);
  EXPECT_EQ(stats.workers[0].address, "w1:1");
  EXPECT_EQ(stats.workers[0].batches, 4u);
  EXPECT_EQ(stats.workers[0].samples, 8u);
}

TEST_F(LoaderTest, NextReplenishesCreditOnTheSourceStream) {
  options_.prefetch_bytes = 6 * 2;
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->credits(), 2u);
  stream->Deliver(MakeBatchMessage(kJob, 0, 0));
  stream->Deliver(MakeBatchMessage(kJob, 0, 1));
  EXPECT_EQ(stream->credits(), 2u);  // both buffered: nothing more
  ASSERT_TRUE(loader->Next().ok());
  EXPECT_EQ(stream->credits(), 3u);
}

TEST_F(LoaderTest, BlockedOnLaterEpochGrantsExtraCredit) {
  options_.prefetch_bytes = 6;  // one batch
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  stream->Deliver(MakeBatchMessage(kJob, 0, 0));
  ASSERT_TRUE(loader->Next().ok());
  ASSERT_TRUE(stream->AwaitCredits(2));
  stream->Deliver(MakeBatchMessage(kJob, 1, 0));  // spends the credit on epoch 1
  absl::StatusOr<Batch> next;
  std::thread consumer([&] { next = loader->Next(); });
  // Without the extra credit, epoch 0's last batch could never be sent.
  EXPECT_TRUE(stream->AwaitCredits(3));
  stream->Deliver(MakeBatchMessage(kJob, 0, 1));
  consumer.join();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->epoch(), 0u);
  EXPECT_EQ(next->batch_index(), 1u);
}

TEST_F(LoaderTest, StallEscalatesExtraCreditOnTheLoadersClock) {
  options_.prefetch_bytes = 6;  // one batch
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  stream->Deliver(MakeBatchMessage(kJob, 1, 0));  // spends the only credit on epoch 1
  absl::StatusOr<Batch> next;
  std::thread consumer([&] { next = loader->Next(); });
  ASSERT_TRUE(stream->AwaitCredits(2));  // the stall's first extra credit, at once
  // One second of the loader's time later (no real time passes), a heartbeat grants one more.
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Heartbeats(1));
  EXPECT_TRUE(stream->AwaitCredits(3));
  stream->Deliver(MakeBatchMessage(kJob, 0, 0));
  consumer.join();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->epoch(), 0u);
}

TEST_F(LoaderTest, ReopensAStreamThatFailedWhileTheWorkerIsListed) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto first = streams_->AwaitStream(0);
  ASSERT_NE(first, nullptr);
  first->Deliver(MakeBatchMessage(kJob, 0, 0));
  first->End(absl::UnavailableError("worker w1:1: connection reset"));
  ASSERT_TRUE(Heartbeats(1));  // reconnects: the backoff is below one heartbeat interval
  auto second = streams_->AwaitStream(1);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->address(), "w1:1");
  EXPECT_TRUE(second->AwaitCredits(1));
  second->Deliver(MakeBatchMessage(kJob, 0, 0));  // re-sent by another lease: a duplicate
  second->Deliver(MakeBatchMessage(kJob, 0, 1));
  std::vector<Batch> got;
  for (int i = 0; i < 2; ++i) {
    auto batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    got.push_back(*batch);
  }
  EXPECT_THAT(Indices(got), ElementsAre(0, 1));
  LoaderStats stats = loader->stats();
  EXPECT_EQ(stats.duplicates_dropped, 1u);
  EXPECT_EQ(stats.stream_failures, 1u);
  EXPECT_EQ(stats.streams_opened, 2u);
}

TEST_F(LoaderTest, EpochRangeStopsAtTheEpochBoundary) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  for (uint32_t epoch : {0u, 1u}) {
    for (uint64_t index : {1u, 0u}) stream->Deliver(MakeBatchMessage(kJob, epoch, index));
  }
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    auto range = loader->Epoch();
    EXPECT_EQ(range.epoch(), epoch);
    std::vector<Batch> got;
    for (const Batch& batch : range) got.push_back(batch);
    EXPECT_TRUE(range.status().ok()) << range.status();
    EXPECT_THAT(Indices(got), ElementsAre(1, 0));
    for (const Batch& batch : got) EXPECT_EQ(batch.epoch(), epoch);
  }
  auto past_end = loader->Epoch();
  EXPECT_TRUE(past_end.begin() == past_end.end());
  EXPECT_TRUE(past_end.status().ok());
}

TEST_F(LoaderTest, EpochRangeEndsWithTheErrorInStatus) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  loader->Stop();
  auto range = loader->Epoch();
  int n = 0;
  for (const Batch& batch : range) n += static_cast<int>(batch.num_samples());
  EXPECT_EQ(n, 0);
  EXPECT_EQ(range.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(LoaderTest, StopWakesABlockedNextAndHalfClosesStreams) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  absl::StatusOr<Batch> next;
  std::thread consumer([&] { next = loader->Next(); });
  loader->Stop();
  consumer.join();
  EXPECT_EQ(next.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(stream->closed());
  EXPECT_TRUE(stream->ended());
  loader->Stop();  // idempotent
  EXPECT_EQ(loader->Next().status().code(), absl::StatusCode::kCancelled);
}

TEST_F(LoaderTest, OpenJobRejectionIsReturnedWithoutRetry) {
  coordinator_->set_open_job_result(
      absl::AlreadyExistsError("coordinator fake:1: job 'job' exists with another spec"));
  auto loader = Open();
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(coordinator_->open_job_calls(), 1);
}

TEST_F(LoaderTest, UnavailableOpenJobIsRetriedThenReturned) {
  coordinator_->set_open_job_result(absl::UnavailableError("coordinator fake:1: refused"));
  absl::StatusOr<std::unique_ptr<Loader>> loader;
  std::thread opener([&] { loader = Open(); });
  for (int retry = 1; retry <= 2; ++retry) {  // the backoff sleeps on the loader's clock
    if (!coordinator_->AwaitOpenJobCalls(retry)) {
      ADD_FAILURE() << "attempt " << retry << " never reached the coordinator";
      break;
    }
    clock_.AwaitSleepers(1);  // the sleep after attempt `retry` (the one before has ended)
    clock_.Advance(options_.connect_backoff.max);
  }
  opener.join();
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(loader.status().message()), HasSubstr("fake:1"));
  EXPECT_EQ(coordinator_->open_job_calls(), 3);
}

TEST_F(LoaderTest, InvalidOptionsNeverReachTheCoordinator) {
  options_.rank = 1;
  auto loader = Open();
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loader.status().message()), HasSubstr("rank: must be <"));
  EXPECT_EQ(coordinator_->open_job_calls(), 0);
}

// A tail factory that records what it was asked for and fails (Open then fails with it).
BatchTailFactory RecordingTailFactory(v1::PipelineSpec* tail, std::vector<int64_t>* shape) {
  return [tail, shape](
             const v1::PipelineSpec& spec,
             absl::Span<const int64_t> batch_shape) -> absl::StatusOr<std::unique_ptr<BatchTail>> {
    *tail = spec;
    shape->assign(batch_shape.begin(), batch_shape.end());
    return absl::InternalError("recording factory");
  };
}

TEST_F(LoaderTest, AsksForTheTailPlacementItCanRun) {
  auto without_tail = Open();  // no LoaderEnv::tail: the workers must run the tail
  ASSERT_TRUE(without_tail.ok()) << without_tail.status();
  EXPECT_EQ(coordinator_->last_open_job_request().spec().tail(), v1::TAIL_PLACEMENT_UNSPECIFIED);
  (*without_tail)->Stop();

  v1::PipelineSpec tail;
  std::vector<int64_t> shape;
  LoaderEnv env;
  env.coordinator = coordinator_;
  env.worker_streams = streams_;
  env.clock = &clock_;
  env.tail = RecordingTailFactory(&tail, &shape);
  auto with_tail = Loader::Open(options_, env);  // the fake places no tail: no factory call
  ASSERT_TRUE(with_tail.ok()) << with_tail.status();
  EXPECT_EQ(coordinator_->last_open_job_request().spec().tail(), v1::TAIL_PLACEMENT_AUTO);
  EXPECT_FALSE((*with_tail)->tail_runs_here());
  (*with_tail)->Stop();
  EXPECT_EQ(shape.size(), 0u);

  options_.spec.set_tail(v1::TAIL_PLACEMENT_CLIENT);
  auto forced = Loader::Open(options_, env);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_EQ(coordinator_->last_open_job_request().spec().tail(), v1::TAIL_PLACEMENT_CLIENT);
  (*forced)->Stop();
}

TEST_F(LoaderTest, RunsTheTailTheCoordinatorPlacedHere) {
  absl::StatusOr<v1::OpenJobResponse> placed = coordinator_->OpenJob(v1::OpenJobRequest());
  ASSERT_TRUE(placed.ok());
  placed->mutable_client_tail()->add_ops()->mutable_to_float();
  coordinator_->set_open_job_result(*placed);

  v1::PipelineSpec tail;
  std::vector<int64_t> shape;
  LoaderEnv env;
  env.coordinator = coordinator_;
  env.worker_streams = streams_;
  env.clock = &clock_;
  env.tail = RecordingTailFactory(&tail, &shape);
  EXPECT_EQ(Loader::Open(options_, env).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(tail.SerializeAsString(), placed->client_tail().SerializeAsString());
  EXPECT_THAT(shape, ::testing::ElementsAre(2, 1, 1, 3));  // the workers' batches

  // A program without a tail implementation cannot take such a job.
  auto loader = Open();
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(loader.status().message()),
              HasSubstr("tail: the job runs its tail on the client"));
}

TEST_F(LoaderTest, PermanentHeartbeatErrorFailsNext) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  coordinator_->set_heartbeat_error(absl::NotFoundError("coordinator fake:1: no job 7"));
  ASSERT_TRUE(Heartbeats(1));
  EXPECT_EQ(loader->Next().status().code(), absl::StatusCode::kNotFound);
}

TEST_F(LoaderTest, FinishedJobWithMissingBatchesFailsNext) {
  coordinator_->AddWorker(1, "w1:1");
  coordinator_->set_state(v1::JOB_STATE_FINISHED);
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  absl::StatusOr<Batch> next = loader->Next();
  EXPECT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(next.status().message()), HasSubstr("received only 0 of the 4"));
}

// A port on 127.0.0.1 that nothing listens on: bound, then closed.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return 1;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(LoaderGrpcTest, UnreachableCoordinatorIsUnavailableNamingTheAddress) {
  LoaderOptions options;
  options.coordinator_address = absl::StrCat("127.0.0.1:", UnusedPort());
  options.tls = TlsConfig::Plaintext();
  options.job_name = "job";
  options.spec.set_world_size(1);
  options.spec.set_epochs(1);
  options.connect_backoff.initial = absl::Milliseconds(1);
  options.connect_backoff.max = absl::Milliseconds(5);
  options.connect_backoff.max_attempts = 2;
  auto loader = Loader::Open(options);
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kUnavailable) << loader.status();
  EXPECT_THAT(std::string(loader.status().message()), HasSubstr(options.coordinator_address));
}

}  // namespace
}  // namespace stoker

namespace stoker {
namespace {

class LoaderResumeTest : public LoaderTest {};

TEST_F(LoaderResumeTest, TokenReflectsTheBatchesReturnedAndResumesWhereItWasTaken) {
  options_.ordered = true;
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  stream->Deliver(MakeBatchMessage(kJob, 0, 1));
  stream->Deliver(MakeBatchMessage(kJob, 0, 0));
  v1::ResumeToken token;
  ASSERT_TRUE(token.ParseFromString(loader->ResumeToken()));
  EXPECT_EQ(token.version(), kResumeTokenVersion);
  EXPECT_EQ(token.job_name(), "job");
  EXPECT_EQ(token.world_size(), 1u);
  EXPECT_EQ(token.epoch(), 0u);
  EXPECT_EQ(token.universe(), 2u);
  EXPECT_EQ(token.delivered_prefix(), 0u);
  absl::StatusOr<Batch> batch = loader->Next();
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->batch_index(), 0u);  // ordered: plan order, not arrival order
  ASSERT_TRUE(token.ParseFromString(loader->ResumeToken()));
  EXPECT_EQ(token.epoch(), 0u);
  EXPECT_EQ(token.delivered_prefix(), 1u);
  EXPECT_EQ(token.delivered_other_size(), 0);
  ASSERT_TRUE(loader->Next().ok());
  ASSERT_TRUE(token.ParseFromString(loader->ResumeToken()));
  EXPECT_EQ(token.epoch(), 1u);  // finished epoch 0: the next, nothing consumed
  EXPECT_EQ(token.delivered_prefix(), 0u);
  loader->Stop();

  // Resume: the coordinator decides the start; the client sends the tokens and its rank.
  auto response = coordinator_->OpenJob(v1::OpenJobRequest());
  ASSERT_TRUE(response.ok());
  v1::ResumePoint* start = response->mutable_start();
  start->set_resumed(true);
  start->set_epoch(1);
  start->set_universe(2);
  start->add_deal(0);
  start->add_deal(1);
  start->set_delivered_prefix(1);
  coordinator_->set_open_job_result(*response);
  options_.resume_tokens = {"token-bytes"};
  options_.rank = 0;
  auto resumed = OpenOrDie();
  ASSERT_NE(resumed, nullptr);
  EXPECT_THAT(coordinator_->last_open_job_request().resume_tokens(), ElementsAre("token-bytes"));
  auto stream2 = streams_->AwaitStream(1);
  ASSERT_NE(stream2, nullptr);
  stream2->Deliver(MakeBatchMessage(kJob, 1, 0));  // returned before the resume: dropped
  stream2->Deliver(MakeBatchMessage(kJob, 1, 1));
  batch = resumed->Next();
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->epoch(), 1u);
  EXPECT_EQ(batch->batch_index(), 1u);
  EXPECT_EQ(resumed->Next().status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(resumed->stats().duplicates_dropped, 1u);
  ASSERT_TRUE(token.ParseFromString(resumed->ResumeToken()));
  EXPECT_EQ(token.epoch(), 2u);
}

TEST_F(LoaderResumeTest, MalformedResumePointFailsOpen) {
  auto response = coordinator_->OpenJob(v1::OpenJobRequest());
  ASSERT_TRUE(response.ok());
  v1::ResumePoint* start = response->mutable_start();
  start->set_resumed(true);
  start->set_epoch(0);
  start->set_universe(2);
  start->add_deal(1);
  start->add_deal(1);  // listed twice: the coordinator and the client check deals alike
  coordinator_->set_open_job_result(*response);
  options_.resume_tokens = {"token-bytes"};
  auto loader = Open();
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loader.status().message()),
              HasSubstr("OpenJobResponse.start.deal[1]: batch 1 is listed twice"));
}

TEST_F(LoaderResumeTest, EmptyTokenIsInvalid) {
  options_.resume_tokens = {""};
  EXPECT_EQ(Open().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(coordinator_->open_job_calls(), 0);
}

}  // namespace
}  // namespace stoker
