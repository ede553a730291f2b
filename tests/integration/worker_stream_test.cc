// Worker.StreamBatches misuse, spoken in raw gRPC: the exact codes a client sees.

#include <grpcpp/grpcpp.h>

#include "common/tls/grpc_tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "tests/testing/test_cluster.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

class WorkerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Start(1);
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

  uint64_t OpenJob(uint32_t world_size) {
    pb::OpenJobRequest request;
    request.set_name("stream-test");
    pb::JobSpec* spec = request.mutable_spec();
    auto* synthetic = spec->mutable_dataset()->mutable_synthetic();
    synthetic->set_num_samples(8);
    synthetic->set_height(4);
    synthetic->set_width(4);
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

TEST(WorkerServerTest, UnreachableCoordinatorIsUnavailableNamingIt) {
  // Nothing listens on port 1 of loopback.
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:1";
  config.tls = TlsConfig::Plaintext();  // Unreachable either way.
  config.register_backoff = BackoffPolicy{absl::Milliseconds(1), absl::Milliseconds(5), 2.0, 3};
  absl::StatusOr<std::unique_ptr<WorkerServer>> server = WorkerServer::Start(config);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("127.0.0.1:1"));
}

TEST(WorkerServerTest, BadConfigIsInvalidArgument) {
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:1";
  config.tls = TlsConfig::Plaintext();
  config.listen_address = "no-port";
  EXPECT_EQ(WorkerServer::Start(config).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
