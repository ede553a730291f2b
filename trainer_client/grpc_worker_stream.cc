// gRPC glue for WorkerStream: one sync bidi call per worker, a reader and a writer thread (the
// protocol walk-through is in worker_stream.h).

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "common/grpc_settings.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "trainer_client/worker_stream.h"

namespace stoker {
namespace {

using Call = grpc::ClientReaderWriter<v1::ClientMessage, v1::BatchMessage>;

// Thread-safe.
class GrpcWorkerStream : public WorkerStream {
 public:
  GrpcWorkerStream(const std::string& address, const v1::OpenStream& open,
                   WorkerStreamHooks hooks, int max_message_bytes)
      : address_(address), open_(open), hooks_(std::move(hooks)) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(max_message_bytes);
    ApplyClientKeepalive(&args);
    // A private subchannel: a restarted worker is dialled at once, not after the backoff of a
    // subchannel shared with an earlier, failed stream.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    stub_ = v1::Worker::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    absl::MutexLock lock(&join_mu_);
    reader_ = std::thread([this] { ReadLoop(); });
  }

  ~GrpcWorkerStream() override {
    Cancel();
    Join();
  }

  void GrantCredit(uint32_t n) override {
    absl::MutexLock lock(&mu_);
    if (closing_ || finished_) return;
    pending_credit_ += n;
  }

  void Ack(const v1::TaskId& task) override {
    absl::MutexLock lock(&mu_);
    if (closing_ || finished_) return;
    *pending_acks_.add_tasks() = task;
  }

  void Close() override {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }

  void Cancel() override { context_.TryCancel(); }

  void Join() override {
    absl::MutexLock lock(&join_mu_);
    if (reader_.joinable()) reader_.join();
  }

 private:
  void ReadLoop() {
    // Starting the call blocks until it is sent or fails (e.g. connection refused).
    call_ = stub_->StreamBatches(&context_);
    std::thread writer([this] { WriteLoop(); });
    while (true) {
      std::shared_ptr<v1::BatchMessage> message = hooks_.allocate();
      if (!call_->Read(message.get())) break;
      hooks_.on_batch(std::move(message));
    }
    {
      absl::MutexLock lock(&mu_);
      finished_ = true;
    }
    writer.join();  // Finish() must not race a Write.
    const grpc::Status status = call_->Finish();
    hooks_.on_done(FromGrpcStatus(status, "worker " + address_));
  }

  void WriteLoop() {
    v1::ClientMessage open;
    *open.mutable_open() = open_;
    if (!call_->Write(open)) return;
    auto has_work = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return finished_ || closing_ || pending_credit_ > 0 || pending_acks_.tasks_size() > 0;
    };
    while (true) {
      v1::ClientMessage credit;
      v1::ClientMessage ack;
      bool close = false;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(&has_work));
        if (finished_) return;
        if (pending_credit_ > 0) credit.mutable_credit()->set_n(pending_credit_);
        pending_credit_ = 0;
        if (pending_acks_.tasks_size() > 0) ack.mutable_ack()->Swap(&pending_acks_);
        close = closing_;
      }
      if (credit.has_credit() && !call_->Write(credit)) return;
      if (ack.has_ack() && !call_->Write(ack)) return;
      if (close) {
        call_->WritesDone();
        return;
      }
    }
  }

  const std::string address_;
  const v1::OpenStream open_;
  const WorkerStreamHooks hooks_;
  std::unique_ptr<v1::Worker::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<Call> call_;  // written by the reader thread before the writer starts

  absl::Mutex mu_;
  uint32_t pending_credit_ ABSL_GUARDED_BY(mu_) = 0;
  v1::Ack pending_acks_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Read failed: the call is over

  absl::Mutex join_mu_;
  std::thread reader_ ABSL_GUARDED_BY(join_mu_);
};

class GrpcWorkerStreamFactory : public WorkerStreamFactory {
 public:
  explicit GrpcWorkerStreamFactory(int max_message_bytes)
      : max_message_bytes_(max_message_bytes) {}

  std::unique_ptr<WorkerStream> Open(const std::string& address, const v1::OpenStream& open,
                                     WorkerStreamHooks hooks) override {
    return std::make_unique<GrpcWorkerStream>(address, open, std::move(hooks),
                                              max_message_bytes_);
  }

 private:
  const int max_message_bytes_;
};

}  // namespace

std::shared_ptr<WorkerStreamFactory> NewGrpcWorkerStreamFactory(uint64_t batch_bytes,
                                                                uint32_t batch_size) {
  return std::make_shared<GrpcWorkerStreamFactory>(MaxBatchMessageBytes(batch_bytes, batch_size));
}

}  // namespace stoker
