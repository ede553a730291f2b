// gRPC glue for WorkerStream: one callback-API bidi call per worker, no thread of its own (the
// protocol walk-through is in worker_stream.h).

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_settings.h"
#include "common/grpc_status.h"
#include "common/tls/grpc_tls.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "trainer_client/worker_stream.h"
#include "wire/grpc_batch_reader.h"

namespace stoker {
namespace {

// Generic on the read side: batches arrive as grpc::ByteBuffer (ReadBatch keeps their slices)
// instead of being parsed, payload included, into a BatchMessage by gRPC.
using BatchStub = grpc::TemplatedGenericStub<v1::ClientMessage, grpc::ByteBuffer>;

// The reactor of one call. The GrpcWorkerStream handle owns it and destroys it only after Join
// (OnDone has run), on the Loader's thread, never from a reaction: the reactor's ClientContext
// holds the channel, and a channel released on gRPC's callback thread may drop the last
// reference to gRPC's process-wide callback completion queue, which then shuts down under the
// thread running it (an abort in grpc_cq_internal_unref, seen in the chaos suite). Start* calls
// are never made while holding mu_ (gRPC may run a reaction inline), and only while the
// application hold is in place (StartNextWriteLocked releases it). Thread-safe.

class StreamBatchesClientReactor
    : public grpc::ClientBidiReactor<v1::ClientMessage, grpc::ByteBuffer> {
 public:
  StreamBatchesClientReactor(const std::string& address, WorkerStreamHooks hooks,
                             int max_message_bytes,
                             const std::shared_ptr<grpc::ChannelCredentials>& credentials)
      : address_(address), hooks_(std::move(hooks)) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(max_message_bytes);
    ApplyClientKeepalive(&args);
    // A private subchannel: a restarted worker is dialled at once, not after the backoff of a
    // subchannel shared with an earlier, failed stream.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    stub_ = std::make_unique<BatchStub>(grpc::CreateCustomChannel(address, credentials, args));
  }

  // Starts the call: Open is the first write, the first read is posted. Never blocks.
  void Start(const v1::OpenStream& open) {
    *outgoing_.mutable_open() = open;
    {
      absl::MutexLock lock(&mu_);
      writing_ = true;
    }
    stub_->PrepareBidiStreamingCall(
        &context_, absl::StrCat("/", v1::Worker::service_full_name(), "/StreamBatches"),
        grpc::StubOptions(), this);
    AddHold();  // released once no more writes will be started from outside a reaction
    StartWrite(&outgoing_);
    StartRead(&incoming_);
    StartCall();
  }

  void GrantCredit(uint32_t n) {
    absl::MutexLock lock(&mu_);
    if (closing_ || hold_released_) return;
    pending_credit_ += n;
    StartNextWriteLocked();
  }

  void Ack(const v1::TaskId& task) {
    absl::MutexLock lock(&mu_);
    if (closing_ || hold_released_) return;
    *pending_acks_.add_tasks() = task;
    StartNextWriteLocked();
  }

  void SetCompression(const v1::CompressionChoice& choice) {
    absl::MutexLock lock(&mu_);
    if (closing_ || hold_released_) return;
    pending_compression_ = choice;
    StartNextWriteLocked();
  }

  void Close() {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    StartNextWriteLocked();
  }

  void Cancel() { context_.TryCancel(); }

  void Join() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&done_));
  }

  // --- Reactions (gRPC threads) ---

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) write_failed_ = true;  // the call is broken; the read side ends it
    StartNextWriteLocked();
  }

  void OnWritesDoneDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    StartNextWriteLocked();  // releases the hold
  }

  void OnReadDone(bool ok) override {
    absl::Status malformed;
    if (ok) {
      absl::StatusOr<ReceivedBatch> batch =
          ReadBatch(&incoming_, hooks_.allocate(), hooks_.gather_buffers);
      if (batch.ok()) {
        hooks_.on_batch(Batch(*std::move(batch)));
        StartRead(&incoming_);
        return;
      }
      malformed = std::move(batch).status();
    }
    incoming_.Clear();
    {
      absl::MutexLock lock(&mu_);
      read_done_ = true;
      if (!malformed.ok()) malformed_ = malformed;
      StartNextWriteLocked();  // releases the hold once no write is in flight
    }
    if (!malformed.ok()) context_.TryCancel();  // OnDone reports `malformed`
  }

  void OnDone(const grpc::Status& status) override {
    // The last reaction: after done_ is set only Join's caller touches the reactor.
    absl::Status malformed;
    {
      absl::MutexLock lock(&mu_);
      malformed = malformed_;
    }
    hooks_.on_done(
        FromGrpcStatus(malformed.ok() ? status : ToGrpcStatus(malformed), "worker " + address_));
    absl::MutexLock lock(&mu_);
    done_ = true;
  }

 private:
  // Picks the next write when none is in flight: coalesced credit, then batched acks, then the
  // half-close once closing; releases the hold when no write will follow. Unlocks mu_ around the
  // Start* call and relocks it (a reaction may run inline).
  void StartNextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || hold_released_) return;
    if (read_done_ || write_failed_ || writes_done_) {
      hold_released_ = true;
      mu_.Unlock();
      RemoveHold();
      mu_.Lock();
      return;
    }
    outgoing_.Clear();
    if (pending_credit_ > 0) {
      outgoing_.mutable_credit()->set_n(pending_credit_);
      if (hooks_.credit_clock)
        outgoing_.mutable_credit()->set_client_clock_ns(hooks_.credit_clock());
      pending_credit_ = 0;
    } else if (pending_acks_.tasks_size() > 0) {
      outgoing_.mutable_ack()->Swap(&pending_acks_);
    } else if (pending_compression_.has_value()) {
      *outgoing_.mutable_set_compression() = *pending_compression_;
      pending_compression_.reset();
    } else if (closing_) {
      writes_done_ = true;
      writing_ = true;
      mu_.Unlock();
      StartWritesDone();
      mu_.Lock();
      return;
    } else {
      return;  // nothing to send
    }
    writing_ = true;
    mu_.Unlock();
    StartWrite(&outgoing_);
    mu_.Lock();
  }

  const std::string address_;
  const WorkerStreamHooks hooks_;
  std::unique_ptr<BatchStub> stub_;
  grpc::ClientContext context_;
  // The message being read into; touched only by Start and the read reactions, one at a time.
  grpc::ByteBuffer incoming_;
  // The message being written; owned by whoever set writing_ until its OnWriteDone.
  v1::ClientMessage outgoing_;

  absl::Mutex mu_;
  uint32_t pending_credit_ ABSL_GUARDED_BY(mu_) = 0;
  v1::Ack pending_acks_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::CompressionChoice> pending_compression_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;      // one write (or the half-close) in flight
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;  // the half-close was started
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status malformed_ ABSL_GUARDED_BY(mu_);  // why a received message was refused
  bool hold_released_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // OnDone has called on_done
};

// The Loader's handle on one stream. Thread-safe.
class GrpcWorkerStream : public WorkerStream {
 public:
  explicit GrpcWorkerStream(std::shared_ptr<StreamBatchesClientReactor> reactor)
      : reactor_(std::move(reactor)) {}
  ~GrpcWorkerStream() override {
    Cancel();
    Join();
  }

  void GrantCredit(uint32_t n) override { reactor_->GrantCredit(n); }
  void Ack(const v1::TaskId& task) override { reactor_->Ack(task); }
  void SetCompression(const v1::CompressionChoice& choice) override {
    reactor_->SetCompression(choice);
  }
  void Close() override { reactor_->Close(); }
  void Cancel() override { reactor_->Cancel(); }
  void Join() override { reactor_->Join(); }

 private:
  const std::shared_ptr<StreamBatchesClientReactor> reactor_;
};

class GrpcWorkerStreamFactory : public WorkerStreamFactory {
 public:
  // One credentials object (and so one certificate watcher) for every stream.
  GrpcWorkerStreamFactory(int max_message_bytes, const TlsConfig& tls)
      : max_message_bytes_(max_message_bytes),
        credentials_(ChannelCredentials(tls, {Role::kWorker})) {}

  std::unique_ptr<WorkerStream> Open(const std::string& address, const v1::OpenStream& open,
                                     WorkerStreamHooks hooks) override {
    auto reactor = std::make_shared<StreamBatchesClientReactor>(address, std::move(hooks),
                                                                max_message_bytes_, credentials_);
    reactor->Start(open);
    return std::make_unique<GrpcWorkerStream>(std::move(reactor));
  }

 private:
  const int max_message_bytes_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
};

}  // namespace

std::shared_ptr<WorkerStreamFactory> NewGrpcWorkerStreamFactory(uint64_t batch_bytes,
                                                                uint32_t batch_size,
                                                                const TlsConfig& tls) {
  return std::make_shared<GrpcWorkerStreamFactory>(MaxBatchMessageBytes(batch_bytes, batch_size),
                                                   tls);
}

}  // namespace stoker
