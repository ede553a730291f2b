// The trainer client's gRPC worker stream (trainer_client/grpc_worker_stream.cc, a callback-API
// reactor) against a real worker: credit and acks flow through its one-write-at-a-time outbox,
// Close half-closes and the worker ends the stream OK, Cancel ends it CANCELLED, an unreachable
// worker ends it UNAVAILABLE naming the address, a message that is no BatchMessage ends it
// DATA_LOSS naming the worker and delivers nothing; on_done comes exactly once, and last.

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/worker_stream.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

constexpr uint64_t kBatches = 8;
constexpr absl::Duration kLimit = absl::Seconds(30);  // a safety net, not a timing assertion

// What the hooks saw. Thread-safe.
class Recorder {
 public:
  WorkerStreamHooks Hooks() {
    WorkerStreamHooks hooks;
    hooks.allocate = [] { return std::make_shared<pb::BatchMessage>(); };
    hooks.on_batch = [this](Batch batch) {
      absl::MutexLock lock(&mu_);
      if (done_calls_ > 0) ++batches_after_done_;
      tasks_.push_back(batch.header().task());
    };
    hooks.on_done = [this](const absl::Status& status) {
      absl::MutexLock lock(&mu_);
      ++done_calls_;
      status_ = status;
    };
    return hooks;
  }

  std::vector<pb::TaskId> AwaitBatches(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return tasks_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kLimit);
    return tasks_;
  }
  // After Join: how the stream ended, checking on_done came once and nothing after it.
  absl::Status Ended() {
    absl::MutexLock lock(&mu_);
    EXPECT_EQ(done_calls_, 1);
    EXPECT_EQ(batches_after_done_, 0);
    return status_;
  }

 private:
  absl::Mutex mu_;
  std::vector<pb::TaskId> tasks_ ABSL_GUARDED_BY(mu_);
  int done_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int batches_after_done_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

class GrpcWorkerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    pb::OpenJobRequest request;
    request.set_name("grpc-stream");
    pb::JobSpec* spec = request.mutable_spec();
    auto* synthetic = spec->mutable_dataset()->mutable_synthetic();
    synthetic->set_num_samples(kBatches * 2);
    synthetic->set_height(4);
    synthetic->set_width(4);
    synthetic->set_channels(1);
    synthetic->set_num_classes(2);
    spec->set_batch_size(2);
    spec->set_world_size(1);
    spec->set_epochs(1);
    auto job = cluster_->coordinator()->coordinator()->OpenJob(request);
    ASSERT_TRUE(job.ok()) << job.status();
    job_ = *job;
    factory_ = NewGrpcWorkerStreamFactory(job_.batch_bytes(), /*batch_size=*/2,
                                          cluster_->tls_for(Role::kTrainer));
  }

  std::unique_ptr<WorkerStream> Open(const std::string& address, Recorder& recorder) {
    pb::OpenStream open;
    open.set_job_id(job_.job_id());
    open.set_rank(0);
    open.set_client_id("grpc-stream-test");
    return factory_->Open(address, open, recorder.Hooks());
  }

  std::unique_ptr<TestCluster> cluster_;
  pb::OpenJobResponse job_;
  std::shared_ptr<WorkerStreamFactory> factory_;
};

TEST_F(GrpcWorkerStreamTest, CreditedBatchesArriveAckedAndCloseEndsTheStreamOk) {
  Recorder recorder;
  std::unique_ptr<WorkerStream> stream = Open(cluster_->worker(0)->address(), recorder);
  // Credit in several grants: the outbox coalesces what queues up behind the write in flight.
  for (uint64_t i = 0; i < kBatches; ++i) stream->GrantCredit(1);
  const std::vector<pb::TaskId> tasks = recorder.AwaitBatches(kBatches);
  ASSERT_EQ(tasks.size(), kBatches);
  std::set<uint64_t> indices;
  for (const pb::TaskId& task : tasks) {
    EXPECT_EQ(task.job_id(), job_.job_id());
    indices.insert(task.batch_index());
    stream->Ack(task);
  }
  EXPECT_EQ(indices.size(), kBatches);
  stream->Close();
  stream->Join();
  EXPECT_TRUE(recorder.Ended().ok()) << recorder.Ended();
}

TEST_F(GrpcWorkerStreamTest, CancelEndsTheStreamCancelled) {
  Recorder recorder;
  std::unique_ptr<WorkerStream> stream = Open(cluster_->worker(0)->address(), recorder);
  stream->Cancel();
  stream->Join();
  EXPECT_EQ(recorder.Ended().code(), absl::StatusCode::kCancelled);
  stream->GrantCredit(1);  // ignored once the stream ended
  stream->Close();
}

TEST_F(GrpcWorkerStreamTest, UnreachableWorkerEndsUnavailableNamingIt) {
  const std::string address = cluster_->worker(0)->address();
  cluster_->Stop();  // nothing listens there any more
  Recorder recorder;
  std::unique_ptr<WorkerStream> stream = Open(address, recorder);
  stream->GrantCredit(1);
  stream->Join();
  const absl::Status status = recorder.Ended();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("worker " + address));
}

// A "worker" that answers every StreamBatches with `reply` and ends the stream OK (plaintext).
class RawReplyWorker : public grpc::CallbackGenericService {
 public:
  explicit RawReplyWorker(std::string reply) : reply_(std::move(reply)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(this);
    server_ = builder.BuildAndStart();
  }
  ~RawReplyWorker() override { server_->Shutdown(); }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    return new Reply(reply_);
  }

 private:
  class Reply : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reply(const std::string& bytes) {
      grpc::Slice slice(bytes);
      bytes_ = grpc::ByteBuffer(&slice, 1);
      StartWrite(&bytes_);
    }
    void OnWriteDone(bool) override { Finish(grpc::Status::OK); }
    void OnDone() override { delete this; }

   private:
    grpc::ByteBuffer bytes_;
  };

  const std::string reply_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST(GrpcWorkerStreamWireTest, MalformedBatchEndsTheStreamDataLossNamingTheWorker) {
  pb::BatchMessage batch;
  batch.mutable_header()->mutable_task()->set_batch_index(1);
  batch.set_data(std::string(100, 'x'));
  const std::string wire = batch.SerializeAsString();
  RawReplyWorker worker(wire.substr(0, wire.size() - 10));  // the payload cut short
  auto factory =
      NewGrpcWorkerStreamFactory(/*batch_bytes=*/1 << 20, /*batch_size=*/1, TlsConfig::Plaintext());
  Recorder recorder;
  pb::OpenStream open;
  open.set_client_id("malformed-test");
  std::unique_ptr<WorkerStream> stream = factory->Open(worker.address(), open, recorder.Hooks());
  stream->GrantCredit(1);
  stream->Join();
  const absl::Status status = recorder.Ended();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("worker " + worker.address() + ": "));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("field 2 truncated (100 bytes announced, 90 left)"));
  EXPECT_TRUE(recorder.AwaitBatches(0).empty());
}

}  // namespace
}  // namespace stoker
