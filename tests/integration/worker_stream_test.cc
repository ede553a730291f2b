// Worker.StreamBatches misuse, spoken in raw gRPC: the exact codes a client sees, and the
// reactor's write/Finish order when a client's error arrives while batches are being written
// (run under ASan by scripts/test-sanitized.sh).

#include <grpcpp/grpcpp.h>

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/tls/grpc_tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "tests/testing/test_cluster.h"
#include "worker/worker.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

// The worker's --memory-bytes: 8 batches of the 2 MiB jobs below.
constexpr uint64_t kWorkerMemory = 16 << 20;

class WorkerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TestClusterOptions options;
    options.workers = 1;
    options.configure_worker = [](size_t, WorkerConfig* config) {
      config->memory_bytes = kWorkerMemory;
    };
    auto cluster = TestCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    stub_ = pb::Worker::NewStub(grpc::CreateChannel(
        cluster_->worker(0)->address(),
        ChannelCredentials(cluster_->tls_for(Role::kTrainer), {Role::kWorker})));
  }

  // Sends `first` on a new stream, half-closes, drains and returns the stream's status.
  grpc::Status StreamWith(const pb::ClientMessage& first) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto stream = stub_->StreamBatches(&context);
    stream->Write(first);
    stream->WritesDone();
    pb::BatchMessage batch;
    while (stream->Read(&batch)) {
    }
    return stream->Finish();
  }

  // A job of `samples` samples of side x side pixels (float32 with `to_float`), 2 per batch.
  uint64_t OpenJob(uint32_t world_size, uint32_t side = 4, bool to_float = false,
                   uint64_t samples = 8) {
    pb::OpenJobRequest request;
    request.set_name(absl::StrCat("stream-test-", side, "-", to_float));
    pb::JobSpec* spec = request.mutable_spec();
    if (to_float) spec->mutable_pipeline()->add_ops()->mutable_to_float();
    auto* synthetic = spec->mutable_dataset()->mutable_synthetic();
    synthetic->set_num_samples(samples);
    synthetic->set_height(side);
    synthetic->set_width(side);
    synthetic->set_channels(1);
    synthetic->set_num_classes(2);
    spec->set_batch_size(2);
    spec->set_world_size(world_size);
    spec->set_epochs(1);
    auto response = cluster_->coordinator()->coordinator()->OpenJob(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->job_id() : 0;
  }

  std::unique_ptr<TestCluster> cluster_;
  std::unique_ptr<pb::Worker::Stub> stub_;
};

TEST_F(WorkerStreamTest, FirstMessageMustBeOpen) {
  pb::ClientMessage credit;
  credit.mutable_credit()->set_n(1);
  grpc::Status status = StreamWith(credit);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("open"));
}

TEST_F(WorkerStreamTest, UnknownJobIsNotFound) {
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(OpenJob(2) + 1);  // of this coordinator, never opened
  open.mutable_open()->set_client_id("c");
  EXPECT_EQ(StreamWith(open).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(WorkerStreamTest, JobOfAnotherCoordinatorIncarnationIsFailedPrecondition) {
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(424242);  // incarnation 0: no coordinator mints it
  open.mutable_open()->set_client_id("c");
  grpc::Status status = StreamWith(open);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("incarnation"));
}

TEST_F(WorkerStreamTest, RankOutsideWorldIsInvalidArgument) {
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(OpenJob(2));
  open.mutable_open()->set_rank(2);
  open.mutable_open()->set_client_id("c");
  grpc::Status status = StreamWith(open);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("rank"));
}

TEST_F(WorkerStreamTest, OpenWithoutCreditEndsCleanlyOnHalfClose) {
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(OpenJob(1));
  open.mutable_open()->set_client_id("c");
  EXPECT_TRUE(StreamWith(open).ok());
}

pb::ClientMessage OpenMessage(uint64_t job_id, uint32_t rank = 0) {
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(job_id);
  open.mutable_open()->set_rank(rank);
  open.mutable_open()->set_client_id("c");
  return open;
}

pb::ClientMessage CreditMessage(uint32_t n) {
  pb::ClientMessage credit;
  credit.mutable_credit()->set_n(n);
  return credit;
}

TEST_F(WorkerStreamTest, AnAckOfATaskNeverSentEndsTheStreamAndTheWorkerServesOn) {
  const uint64_t job = OpenJob(1);
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto stream = stub_->StreamBatches(&context);
    ASSERT_TRUE(stream->Write(OpenMessage(job)));
    pb::ClientMessage ack;
    for (uint64_t i = 0; i < 50000; ++i) {
      pb::TaskId* task = ack.mutable_ack()->add_tasks();
      task->set_job_id(job);
      task->set_batch_index(1000 + i);
    }
    stream->Write(ack);
    stream->WritesDone();
    pb::BatchMessage batch;
    while (stream->Read(&batch)) {
    }
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("ack.tasks: task (job"));
    EXPECT_THAT(status.error_message(), HasSubstr("batch 1000)"));
  }
  EXPECT_EQ(cluster_->worker(0)->worker()->protocol_errors(ProtocolError::kAckUnsent), 1u);

  // Another stream of the same job gets its batches and may ack them.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub_->StreamBatches(&context);
  ASSERT_TRUE(stream->Write(OpenMessage(job)));
  ASSERT_TRUE(stream->Write(CreditMessage(4)));
  pb::ClientMessage ack;
  pb::BatchMessage batch;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(stream->Read(&batch));
    *ack.mutable_ack()->add_tasks() = batch.header().task();
  }
  ASSERT_TRUE(stream->Write(ack));
  stream->WritesDone();
  while (stream->Read(&batch)) {
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(cluster_->worker(0)->worker()->protocol_errors(ProtocolError::kAckUnsent), 1u);
}

// Many streams at once (one rank each), each with batches of 2 MiB being written to a client that
// has not read yet, each ended by a bad set_compression: every one ends INVALID_ARGUMENT naming it
// once its writes complete, and nothing is written or finished out of order (ASan sees every
// access).
TEST_F(WorkerStreamTest, AnErrorWhileAWriteIsOutstandingEndsTheStreamAfterTheWrite) {
  constexpr int kStreams = 6;
  const uint64_t job = OpenJob(kStreams, /*side=*/512, /*to_float=*/true, 2 * 2 * kStreams);
  std::vector<grpc::Status> statuses(kStreams);
  std::vector<std::thread> clients;
  for (int c = 0; c < kStreams; ++c) {
    clients.emplace_back([&, c] {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      auto stream = stub_->StreamBatches(&context);
      stream->Write(OpenMessage(job, c));
      stream->Write(CreditMessage(4));
      pb::BatchMessage batch;
      if (c % 2 == 0) stream->Read(&batch);  // half of them wait for their first batch
      pb::ClientMessage bad;
      bad.mutable_set_compression()->set_codec(pb::COMPRESSION_ZSTD);
      bad.mutable_set_compression()->set_level(40);
      stream->Write(bad);
      stream->WritesDone();
      while (stream->Read(&batch)) {
      }
      statuses[c] = stream->Finish();
    });
  }
  for (std::thread& client : clients) client.join();
  for (const grpc::Status& status : statuses) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("set_compression.level"));
  }
  EXPECT_EQ(cluster_->worker(0)->worker()->protocol_errors(ProtocolError::kBadMessage),
            static_cast<uint64_t>(kStreams));
}

// The credit attack of issue 28: a client grants all the credit there is and never reads. Its
// stream holds no more than its share of --memory-bytes, and another rank's stream is served
// to the end meanwhile.
TEST_F(WorkerStreamTest, AClientThatNeverReadsHoldsItsShareAndOthersAreServed) {
  constexpr uint32_t kBatchesPerRank = 16;  // 32 MiB of batches each, twice the worker's memory
  const uint64_t job = OpenJob(2, /*side=*/512, /*to_float=*/true, 2 * 2 * kBatchesPerRank);
  grpc::ClientContext hog_context;
  auto hog = stub_->StreamBatches(&hog_context);
  ASSERT_TRUE(hog->Write(OpenMessage(job, 0)));
  ASSERT_TRUE(hog->Write(CreditMessage(UINT32_MAX)));
  pb::BatchMessage batch;
  ASSERT_TRUE(hog->Read(&batch));  // production for it has begun; it reads nothing more

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto stream = stub_->StreamBatches(&context);
  ASSERT_TRUE(stream->Write(OpenMessage(job, 1)));
  ASSERT_TRUE(stream->Write(CreditMessage(2)));
  for (uint32_t received = 0; received < kBatchesPerRank; ++received) {
    ASSERT_TRUE(stream->Read(&batch)) << "after " << received << " batches";
    pb::ClientMessage ack;
    *ack.mutable_ack()->add_tasks() = batch.header().task();
    ASSERT_TRUE(stream->Write(ack));
    ASSERT_TRUE(stream->Write(CreditMessage(1)));
  }
  stream->WritesDone();
  while (stream->Read(&batch)) {
  }
  EXPECT_TRUE(stream->Finish().ok());

  // The hog alone may hold half the budget (one share kept for the next stream).
  EXPECT_LE(cluster_->worker(0)->worker()->traffic().queued_bytes, kWorkerMemory / 2);
  hog_context.TryCancel();
  hog->Finish();
}

TEST(WorkerServerTest, UnreachableCoordinatorIsUnavailableNamingIt) {
  // Nothing listens on port 1 of loopback.
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:1";
  config.tls = TlsConfig::Plaintext();  // Unreachable either way.
  config.register_backoff = BackoffPolicy{absl::Milliseconds(1), absl::Milliseconds(5), 2.0, 3};
  absl::StatusOr<std::unique_ptr<WorkerServer>> server =
      WorkerServer::Start(config, DatasetIo::FromEnvironment());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("127.0.0.1:1"));
}

TEST(WorkerServerTest, BadConfigIsInvalidArgument) {
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:1";
  config.tls = TlsConfig::Plaintext();
  config.listen_address = "no-port";
  EXPECT_EQ(WorkerServer::Start(config, DatasetIo::FromEnvironment()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
