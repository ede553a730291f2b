// EtcdWatch over gRPC: one bidi stream per watch, read by its own thread into a bounded queue
// (a slow reader holds back etcd's stream, not this process's memory).

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "coordinator/etcd/grpc_etcd_calls.h"

namespace stoker {
namespace {

// Responses a watch holds that its reader has not taken yet.
constexpr size_t kWatchQueueLimit = 64;

class GrpcEtcdWatch : public EtcdWatch {
 public:
  GrpcEtcdWatch(etcdserverpb::Watch::Stub* stub, std::string endpoint,
                std::shared_ptr<EtcdCallRegistry> registry)
      : endpoint_(std::move(endpoint)), registry_(std::move(registry)) {
    registered_ = registry_->Add(&context_);
    if (registered_) stream_ = stub->Watch(&context_);
  }

  ~GrpcEtcdWatch() override {
    Cancel();
    if (registered_) registry_->Remove(&context_);
  }

  // Sends the create request and starts the reader; false when the stream is already gone.
  bool Start(const etcdserverpb::WatchCreateRequest& create) {
    if (stream_ == nullptr) return false;
    etcdserverpb::WatchRequest request;
    *request.mutable_create_request() = create;
    // A failed write shows as the stream's end, which the reader queues.
    stream_->Write(request);
    reader_ = std::thread([this] { ReadAll(); });
    return true;
  }

  absl::StatusOr<etcdserverpb::WatchResponse> Next(absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return cancelled_ || !queue_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "etcd ", endpoint_, ": no watch response within ", absl::FormatDuration(timeout)));
    }
    if (cancelled_) return absl::CancelledError(absl::StrCat("etcd ", endpoint_, ": cancelled"));
    absl::StatusOr<etcdserverpb::WatchResponse> next = queue_.front();
    // The stream's end stays at the front: every later Next returns it too.
    if (next.ok()) queue_.pop_front();
    if (next.ok() && next->compact_revision() != 0) {
      return absl::OutOfRangeError(
          absl::StrCat("etcd ", endpoint_, ": required revision has been compacted (compacted to ",
                       next->compact_revision(), ")"));
    }
    return next;
  }

  void Cancel() override {
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
    }
    context_.TryCancel();
    if (reader_.joinable()) reader_.join();
  }

 private:
  void ReadAll() {
    etcdserverpb::WatchResponse response;
    while (stream_->Read(&response)) {
      if (!Push(std::move(response))) break;
      response.Clear();
    }
    context_.TryCancel();
    const grpc::Status status = stream_->Finish();
    const absl::Status error = EtcdCallError(status, endpoint_);
    Push(absl::UnavailableError(error.ok()
                                    ? absl::StrCat("etcd ", endpoint_, ": watch stream ended")
                                    : absl::StrCat(error.message(), " (watch stream broke)")));
  }

  // Waits for room in the queue; false once cancelled.
  bool Push(absl::StatusOr<etcdserverpb::WatchResponse> item) {
    absl::MutexLock lock(&mu_);
    auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return cancelled_ || queue_.size() < kWatchQueueLimit;
    };
    mu_.Await(absl::Condition(&room));
    if (cancelled_) return false;
    queue_.push_back(std::move(item));
    return true;
  }

  const std::string endpoint_;
  const std::shared_ptr<EtcdCallRegistry> registry_;
  grpc::ClientContext context_;
  bool registered_ = false;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
      stream_;
  std::thread reader_;
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<absl::StatusOr<etcdserverpb::WatchResponse>> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdWatch>> OpenGrpcEtcdWatch(
    etcdserverpb::Watch::Stub* stub, const std::string& endpoint,
    const etcdserverpb::WatchCreateRequest& request, absl::Duration timeout,
    std::shared_ptr<EtcdCallRegistry> registry) {
  auto watch = std::make_unique<GrpcEtcdWatch>(stub, endpoint, std::move(registry));
  if (!watch->Start(request)) {
    return absl::CancelledError(absl::StrCat("etcd ", endpoint, ": client shut down"));
  }
  absl::StatusOr<etcdserverpb::WatchResponse> created = watch->Next(timeout);
  if (!created.ok()) {
    watch->Cancel();
    if (absl::IsDeadlineExceeded(created.status())) {
      return absl::UnavailableError(absl::StrCat("etcd ", endpoint, ": watch not created within ",
                                                 absl::FormatDuration(timeout)));
    }
    return created.status();
  }
  if (!created->created() || created->canceled()) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd ", endpoint, ": watch refused: ", created->cancel_reason()));
  }
  return watch;
}

}  // namespace stoker
