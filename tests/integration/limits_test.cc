// Limits over real gRPC servers (docs/security.md, "Limits"): a request over the coordinator's
// --max-request-bytes, a stream beyond a worker's --max-streams, and a job whose batches a
// worker's --memory-bytes cannot hold, each refused with RESOURCE_EXHAUSTED (naming the flag
// where Stoker writes the message). The flood of tests/chaos/flood_test.py does the same at scale.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/tls/grpc_tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "tests/testing/test_cluster.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

pb::OpenJobRequest SmallJob(const std::string& name) {
  pb::OpenJobRequest request;
  request.set_name(name);
  pb::JobSpec* spec = request.mutable_spec();
  auto* synthetic = spec->mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(64);
  synthetic->set_height(32);
  synthetic->set_width(32);
  synthetic->set_channels(3);
  synthetic->set_num_classes(2);
  spec->mutable_pipeline()->add_ops()->mutable_to_float();
  spec->set_batch_size(8);
  spec->set_world_size(1);
  spec->set_epochs(1);
  return request;
}

// A stream for rank 0 of `job_id` that sent Open and holds; Finish() after WritesDone().
struct HeldStream {
  HeldStream(pb::Worker::Stub* stub, uint64_t job_id) {
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    rw = stub->StreamBatches(&context);
    pb::ClientMessage open;
    open.mutable_open()->set_job_id(job_id);
    open.mutable_open()->set_client_id("limits-test");
    rw->Write(open);
  }
  grpc::Status Finish() {
    rw->WritesDone();
    pb::BatchMessage ignored;
    while (rw->Read(&ignored)) {
    }
    return rw->Finish();
  }
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<pb::ClientMessage, pb::BatchMessage>> rw;
};

TEST(LimitsTest, RequestOverMaxRequestBytesIsResourceExhausted) {
  TestClusterOptions options;
  options.workers = 0;
  options.coordinator.max_request_bytes = 64 << 10;
  auto cluster = TestCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto stub = pb::Coordinator::NewStub(grpc::CreateChannel(
      (*cluster)->coordinator_address(),
      ChannelCredentials((*cluster)->tls_for(Role::kTrainer), {Role::kCoordinator})));
  grpc::ClientContext context;
  pb::OpenJobResponse response;
  const grpc::Status status =
      stub->OpenJob(&context, SmallJob(std::string(100 << 10, 'n')), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
}

TEST(LimitsTest, StreamsBeyondMaxStreamsAreResourceExhausted) {
  TestClusterOptions options;
  options.workers = 1;
  options.configure_worker = [](size_t, WorkerConfig* config) { config->max_streams = 2; };
  auto cluster = TestCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto job = (*cluster)->coordinator()->coordinator()->OpenJob(SmallJob("streams"));
  ASSERT_TRUE(job.ok()) << job.status();
  auto stub = pb::Worker::NewStub(grpc::CreateChannel(
      (*cluster)->worker(0)->address(),
      ChannelCredentials((*cluster)->tls_for(Role::kTrainer), {Role::kWorker})));
  // Three held at once: exactly one is refused (whichever the server admitted last).
  std::vector<std::unique_ptr<HeldStream>> held;
  for (int i = 0; i < 3; ++i)
    held.push_back(std::make_unique<HeldStream>(stub.get(), job->job_id()));
  int ok = 0, refused = 0;
  for (auto& stream : held) {
    const grpc::Status status = stream->Finish();
    if (status.ok()) {
      ++ok;
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_THAT(status.error_message(), HasSubstr("--max-streams=2"));
      ++refused;
    }
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(refused, 1);
  // Their places are free again once the server is done with them (gRPC may tell the client
  // before; the refusal says to retry): bounded retries.
  grpc::Status again;
  for (int attempt = 0; attempt < 100; ++attempt) {
    again = HeldStream(stub.get(), job->job_id()).Finish();
    if (again.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(again.ok()) << again.error_message();
}

TEST(LimitsTest, JobWhoseBatchesExceedTheWorkersMemoryIsResourceExhausted) {
  TestClusterOptions options;
  options.workers = 1;
  // A batch is 8 x 32 x 32 x 3 float32 = 98,304 bytes; the worker holds a few at once.
  options.configure_worker = [](size_t, WorkerConfig* config) { config->memory_bytes = 200000; };
  auto cluster = TestCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto job = (*cluster)->coordinator()->coordinator()->OpenJob(SmallJob("memory"));
  ASSERT_TRUE(job.ok()) << job.status();
  auto stub = pb::Worker::NewStub(grpc::CreateChannel(
      (*cluster)->worker(0)->address(),
      ChannelCredentials((*cluster)->tls_for(Role::kTrainer), {Role::kWorker})));
  HeldStream stream(stub.get(), job->job_id());
  const grpc::Status status = stream.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--memory-bytes"));
  EXPECT_THAT(status.error_message(), HasSubstr("98304 bytes"));
}

}  // namespace
}  // namespace stoker
