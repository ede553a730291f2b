#include "coordinator/etcd/grpc_etcd_client.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/text_file.h"
#include "coordinator/etcd/grpc_etcd_calls.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace stoker {

bool EtcdCallRegistry::Add(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return false;
  contexts_.insert(context);
  return true;
}

void EtcdCallRegistry::Remove(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  contexts_.erase(context);
}

void EtcdCallRegistry::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  for (grpc::ClientContext* context : contexts_) context->TryCancel();
}

bool EtcdCallRegistry::shut_down() const {
  absl::MutexLock lock(&mu_);
  return shut_down_;
}

absl::Status EtcdCallError(const grpc::Status& status, const std::string& endpoint) {
  if (status.ok()) return absl::OkStatus();
  const std::string& message = status.error_message();
  auto code = static_cast<absl::StatusCode>(status.error_code());
  // etcd sends these with its own codes today; the messages are the contract that holds.
  if (absl::StrContains(message, "database space exceeded")) {
    code = absl::StatusCode::kResourceExhausted;
  } else if (absl::StrContains(message, "requested lease not found")) {
    code = absl::StatusCode::kNotFound;
  } else if (absl::StrContains(message, "required revision has been compacted")) {
    code = absl::StatusCode::kOutOfRange;
  }
  return absl::Status(code, absl::StrCat("etcd ", endpoint, ": ", message));
}

namespace {

// Large enough for a range of the coordinator's state in one answer; etcd itself refuses a
// request over 1.5 MiB by default.
constexpr int kEtcdMaxReceiveBytes = 64 << 20;
constexpr size_t kEtcdTlsFileLimit = 1 << 20;

struct EtcdMember {
  std::string endpoint;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<etcdserverpb::KV::Stub> kv;
  std::unique_ptr<etcdserverpb::Lease::Stub> lease;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch;
  std::unique_ptr<etcdserverpb::Maintenance::Stub> maintenance;
};

using KeepAliveStream = grpc::ClientReaderWriter<etcdserverpb::LeaseKeepAliveRequest,
                                                 etcdserverpb::LeaseKeepAliveResponse>;

class GrpcEtcdClient : public EtcdClient {
 public:
  GrpcEtcdClient(std::vector<EtcdMember> members, absl::Duration rpc_timeout)
      : members_(std::move(members)),
        rpc_timeout_(rpc_timeout),
        registry_(std::make_shared<EtcdCallRegistry>()) {}

  ~GrpcEtcdClient() override {
    Shutdown();
    absl::MutexLock lock(&keepalive_mu_);
    CloseKeepAlive();
  }

  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const etcdserverpb::RangeRequest& request) override {
    return Unary<etcdserverpb::RangeResponse>(
        [&](EtcdMember& m, grpc::ClientContext* c, auto* r) { return m.kv->Range(c, request, r); });
  }

  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request) override {
    return Unary<etcdserverpb::TxnResponse>(
        [&](EtcdMember& m, grpc::ClientContext* c, auto* r) { return m.kv->Txn(c, request, r); });
  }

  absl::StatusOr<etcdserverpb::CompactionResponse> Compact(
      const etcdserverpb::CompactionRequest& request) override {
    return Unary<etcdserverpb::CompactionResponse>(
        [&](EtcdMember& m, grpc::ClientContext* c, auto* r) {
          return m.kv->Compact(c, request, r);
        });
  }

  absl::StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(
      const etcdserverpb::LeaseGrantRequest& request) override {
    return Unary<etcdserverpb::LeaseGrantResponse>(
        [&](EtcdMember& m, grpc::ClientContext* c, auto* r) {
          return m.lease->LeaseGrant(c, request, r);
        });
  }

  absl::StatusOr<etcdserverpb::LeaseRevokeResponse> LeaseRevoke(
      const etcdserverpb::LeaseRevokeRequest& request) override {
    return Unary<etcdserverpb::LeaseRevokeResponse>(
        [&](EtcdMember& m, grpc::ClientContext* c, auto* r) {
          return m.lease->LeaseRevoke(c, request, r);
        });
  }

  absl::StatusOr<etcdserverpb::AlarmResponse> Alarm(
      const etcdserverpb::AlarmRequest& request) override {
    return Unary<etcdserverpb::AlarmResponse>([&](EtcdMember& m, grpc::ClientContext* c, auto* r) {
      return m.maintenance->Alarm(c, request, r);
    });
  }

  absl::StatusOr<etcdserverpb::StatusResponse> Status() override {
    const etcdserverpb::StatusRequest request;
    return Unary<etcdserverpb::StatusResponse>([&](EtcdMember& m, grpc::ClientContext* c, auto* r) {
      return m.maintenance->Status(c, request, r);
    });
  }

  absl::StatusOr<std::unique_ptr<EtcdWatch>> Watch(
      const etcdserverpb::WatchCreateRequest& request) override {
    absl::Status last;
    const size_t first = preferred_.load();
    for (size_t k = 0; k < members_.size(); ++k) {
      EtcdMember& member = members_[(first + k) % members_.size()];
      absl::StatusOr<std::unique_ptr<EtcdWatch>> watch =
          OpenGrpcEtcdWatch(member.watch.get(), member.endpoint, request, rpc_timeout_, registry_);
      if (watch.ok() || !absl::IsUnavailable(watch.status())) return watch;
      last = watch.status();
    }
    return last;
  }

  absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> LeaseKeepAlive(int64_t lease_id) override {
    absl::MutexLock lock(&keepalive_mu_);
    absl::Status last;
    const size_t first = keepalive_stream_ != nullptr ? keepalive_member_ : preferred_.load();
    for (size_t k = 0; k < members_.size(); ++k) {
      if (registry_->shut_down()) return ShutDownError();
      if (keepalive_stream_ == nullptr) OpenKeepAlive((first + k) % members_.size());
      absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> response = RenewOnce(lease_id);
      if (response.ok()) return response;
      last = response.status();
      CloseKeepAlive();
      if (!absl::IsUnavailable(last) && !absl::IsDeadlineExceeded(last)) return last;
    }
    return last;
  }

  void Shutdown() override { registry_->Shutdown(); }

 private:
  absl::Status ShutDownError() const {
    return absl::CancelledError(absl::StrCat("etcd ", members_[0].endpoint, ": client shut down"));
  }

  // One call, tried on each member at most once while they answer UNAVAILABLE.
  template <typename Response, typename Call>
  absl::StatusOr<Response> Unary(Call call) {
    absl::Status last;
    const size_t first = preferred_.load();
    for (size_t k = 0; k < members_.size(); ++k) {
      const size_t index = (first + k) % members_.size();
      EtcdMember& member = members_[index];
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + rpc_timeout_));
      if (!registry_->Add(&context)) return ShutDownError();
      Response response;
      const grpc::Status status = call(member, &context, &response);
      registry_->Remove(&context);
      if (status.ok()) {
        preferred_ = index;
        return response;
      }
      last = EtcdCallError(status, member.endpoint);
      if (registry_->shut_down()) return ShutDownError();
      if (absl::IsDeadlineExceeded(last)) preferred_ = (index + 1) % members_.size();
      if (!absl::IsUnavailable(last)) return last;
    }
    return last;
  }

  void OpenKeepAlive(size_t index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(keepalive_mu_) {
    keepalive_member_ = index;
    keepalive_context_ = std::make_unique<grpc::ClientContext>();
    keepalive_registered_ = registry_->Add(keepalive_context_.get());
    keepalive_stream_ = members_[index].lease->LeaseKeepAlive(keepalive_context_.get());
  }

  void CloseKeepAlive() ABSL_EXCLUSIVE_LOCKS_REQUIRED(keepalive_mu_) {
    if (keepalive_stream_ == nullptr) return;
    keepalive_context_->TryCancel();
    keepalive_stream_->Finish();
    if (keepalive_registered_) registry_->Remove(keepalive_context_.get());
    keepalive_stream_.reset();
    keepalive_context_.reset();
  }

  // One renewal on the kept stream. A stream read has no deadline of its own: a watchdog
  // cancels the stream when the answer outlives rpc_timeout_ (a paused member).
  absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> RenewOnce(int64_t lease_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(keepalive_mu_) {
    const std::string& endpoint = members_[keepalive_member_].endpoint;
    absl::Notification answered;
    std::atomic<bool> timed_out{false};
    grpc::ClientContext* const context = keepalive_context_.get();
    std::thread watchdog([&] {
      if (!answered.WaitForNotificationWithTimeout(rpc_timeout_)) {
        timed_out = true;
        context->TryCancel();
      }
    });
    etcdserverpb::LeaseKeepAliveRequest request;
    request.set_id(lease_id);
    etcdserverpb::LeaseKeepAliveResponse response;
    const bool ok = keepalive_stream_->Write(request) && keepalive_stream_->Read(&response);
    answered.Notify();
    watchdog.join();
    if (ok) return response;
    if (timed_out) {
      return absl::DeadlineExceededError(absl::StrCat("etcd ", endpoint,
                                                      ": no lease renewal answer within ",
                                                      absl::FormatDuration(rpc_timeout_)));
    }
    if (registry_->shut_down()) return ShutDownError();
    const grpc::Status status = keepalive_stream_->Finish();
    keepalive_stream_.reset();
    if (keepalive_registered_) registry_->Remove(context);
    keepalive_context_.reset();
    absl::Status error = EtcdCallError(status, endpoint);
    if (error.ok() || absl::IsCancelled(error)) {
      error = absl::UnavailableError(absl::StrCat("etcd ", endpoint, ": lease stream broke"));
    }
    return error;
  }

  std::vector<EtcdMember> members_;
  const absl::Duration rpc_timeout_;
  const std::shared_ptr<EtcdCallRegistry> registry_;
  // The member that answered last: where the next call starts.
  std::atomic<size_t> preferred_{0};

  absl::Mutex keepalive_mu_;
  size_t keepalive_member_ ABSL_GUARDED_BY(keepalive_mu_) = 0;
  std::unique_ptr<grpc::ClientContext> keepalive_context_ ABSL_GUARDED_BY(keepalive_mu_);
  bool keepalive_registered_ ABSL_GUARDED_BY(keepalive_mu_) = false;
  std::unique_ptr<KeepAliveStream> keepalive_stream_ ABSL_GUARDED_BY(keepalive_mu_);
};

absl::StatusOr<std::string> ReadEtcdTlsFile(absl::string_view flag, const std::string& path) {
  if (path.empty()) return std::string();
  return ReadTextFile(flag, path, kEtcdTlsFileLimit);
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdClient>> NewGrpcEtcdClient(const EtcdTarget& target,
                                                              const EtcdTls& tls,
                                                              absl::Duration rpc_timeout) {
  if (target.endpoints.empty()) return absl::InvalidArgumentError("etcd: no endpoint");
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError(tls.cert_file.empty()
                                          ? "--etcd-cert: required with --etcd-key"
                                          : "--etcd-key: required with --etcd-cert");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!tls.ca_file.empty() || !tls.cert_file.empty()) {
    grpc::SslCredentialsOptions options;
    absl::StatusOr<std::string> ca = ReadEtcdTlsFile("--etcd-ca", tls.ca_file);
    absl::StatusOr<std::string> cert = ReadEtcdTlsFile("--etcd-cert", tls.cert_file);
    absl::StatusOr<std::string> key = ReadEtcdTlsFile("--etcd-key", tls.key_file);
    for (const auto* file : {&ca, &cert, &key}) {
      if (!file->ok()) return file->status();
    }
    options.pem_root_certs = *std::move(ca);
    options.pem_cert_chain = *std::move(cert);
    options.pem_private_key = *std::move(key);
    credentials = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kEtcdMaxReceiveBytes);
  // A member that comes back is used again within a second, not after gRPC's default 2 minutes;
  // a connection attempt that a starting member accepted but does not answer gives up after a
  // second, not gRPC's default 20.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1000);
  std::vector<EtcdMember> members;
  for (const std::string& endpoint : target.endpoints) {
    EtcdMember member;
    member.endpoint = endpoint;
    member.channel = grpc::CreateCustomChannel(endpoint, credentials, args);
    member.kv = etcdserverpb::KV::NewStub(member.channel);
    member.lease = etcdserverpb::Lease::NewStub(member.channel);
    member.watch = etcdserverpb::Watch::NewStub(member.channel);
    member.maintenance = etcdserverpb::Maintenance::NewStub(member.channel);
    members.push_back(std::move(member));
  }
  return std::make_unique<GrpcEtcdClient>(std::move(members), rpc_timeout);
}

}  // namespace stoker
