// gRPC glue for CoordinatorClient: each method is one UnaryCaller call per replica tried, on the
// replica that last answered first (docs/decisions/0075-follow-the-leader.md).

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/address_list.h"
#include "common/grpc_settings.h"
#include "common/grpc_unary_caller.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using Stub = pb::Coordinator::Stub;

// The trailing metadata in which a standby names the leader (coordinator/leader_gate.h).
constexpr char kLeaderTrailer[] = "stoker-leader";

grpc::ChannelArguments KeepaliveArgs() {
  grpc::ChannelArguments args;
  ApplyClientKeepalive(&args);
  return args;
}

// One replica's channel. Thread-safe. With TLS, a call that finds the coordinator UNAVAILABLE
// replaces the channel: gRPC 1.51's TLS channels that failed to connect (a coordinator
// restarting) were seen to hang in the next handshake for good, while a fresh channel connects
// at once (docs/decisions/0024-security-identity-roles-data-roots.md).
class CoordinatorReplica {
 public:
  CoordinatorReplica(const std::string& address, absl::Duration rpc_timeout, const TlsConfig& tls,
                     std::shared_ptr<grpc::ChannelCredentials> credentials)
      : address_(address),
        renew_on_unavailable_(!tls.insecure),
        credentials_(std::move(credentials)),
        caller_("coordinator " + address, rpc_timeout),
        stub_(NewStub()) {}

  const std::string& address() const { return address_; }

  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request, absl::Time deadline,
                                UnaryCaller::Trailer* trailer) {
    std::shared_ptr<Stub> stub;
    {
      absl::MutexLock lock(&mu_);
      stub = stub_;
    }
    absl::StatusOr<Response> result = caller_.Call(stub.get(), method, request, deadline, trailer);
    if (renew_on_unavailable_ && result.status().code() == absl::StatusCode::kUnavailable) {
      std::shared_ptr<Stub> fresh = NewStub();
      absl::MutexLock lock(&mu_);
      if (stub_ == stub) stub_ = std::move(fresh);  // Once per failed channel.
    }
    return result;
  }

  void Shutdown() { caller_.Shutdown(); }

 private:
  std::shared_ptr<Stub> NewStub() const {
    return pb::Coordinator::NewStub(
        grpc::CreateCustomChannel(address_, credentials_, KeepaliveArgs()));
  }

  const std::string address_;
  const bool renew_on_unavailable_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  UnaryCaller caller_;
  absl::Mutex mu_;
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mu_);
};

// Responses without coordinator_epoch (StartTrace's, GetTrace's) are of no epoch.
template <typename Response, typename = void>
struct ClientHasEpoch : std::false_type {};
template <typename Response>
struct ClientHasEpoch<Response,
                      std::void_t<decltype(std::declval<Response&>().coordinator_epoch())>>
    : std::true_type {};

template <typename Response>
uint64_t ClientEpochOf(const Response& response) {
  if constexpr (ClientHasEpoch<Response>::value) {
    return response.coordinator_epoch();
  } else {
    return 0;
  }
}

// Thread-safe.
class GrpcCoordinatorClient : public CoordinatorClient {
 public:
  GrpcCoordinatorClient(const std::vector<std::string>& addresses, absl::Duration rpc_timeout,
                        const TlsConfig& tls)
      : rpc_timeout_(rpc_timeout) {
    const std::shared_ptr<grpc::ChannelCredentials> credentials =
        ChannelCredentials(tls, {Role::kCoordinator});
    for (const std::string& address : addresses) {
      replicas_.push_back(
          std::make_unique<CoordinatorReplica>(address, rpc_timeout, tls, credentials));
    }
  }

  absl::StatusOr<pb::OpenJobResponse> OpenJob(const pb::OpenJobRequest& request) override {
    return Call(&Stub::OpenJob, request);
  }
  absl::StatusOr<pb::ClientHeartbeatResponse> ClientHeartbeat(
      const pb::ClientHeartbeatRequest& request) override {
    return Call(&Stub::ClientHeartbeat, request);
  }
  absl::StatusOr<pb::RegisterWorkerResponse> RegisterWorker(
      const pb::RegisterWorkerRequest& request) override {
    return Call(&Stub::RegisterWorker, request);
  }
  absl::StatusOr<pb::WorkerHeartbeatResponse> WorkerHeartbeat(
      const pb::WorkerHeartbeatRequest& request) override {
    return Call(&Stub::WorkerHeartbeat, request);
  }
  absl::StatusOr<pb::LeaseTasksResponse> LeaseTasks(const pb::LeaseTasksRequest& request) override {
    return Call(&Stub::LeaseTasks, request);
  }
  absl::StatusOr<pb::GetJobResponse> GetJob(const pb::GetJobRequest& request) override {
    return Call(&Stub::GetJob, request);
  }
  absl::StatusOr<pb::GetStatusResponse> GetStatus(const pb::GetStatusRequest& request) override {
    return Call(&Stub::GetStatus, request);
  }
  absl::StatusOr<pb::StartTraceResponse> StartTrace(const pb::StartTraceRequest& request) override {
    return Call(&Stub::StartTrace, request);
  }
  absl::StatusOr<pb::GetTraceResponse> GetTrace(const pb::GetTraceRequest& request) override {
    return Call(&Stub::GetTrace, request);
  }
  void Shutdown() override {
    for (const auto& replica : replicas_) replica->Shutdown();
  }
  uint64_t stale_epoch_responses() const override { return stale_epoch_responses_.load(); }

 private:
  // Tries the replica that last answered, then moves on after each UNAVAILABLE (see
  // NewGrpcCoordinatorClient) until one answers otherwise, every replica was tried once, or the
  // deadline passed.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request) {
    const absl::Time deadline = absl::Now() + rpc_timeout_;
    std::vector<bool> tried(replicas_.size(), false);
    size_t at = current_.load();
    absl::Status last;
    for (size_t attempt = 0; attempt < replicas_.size(); ++attempt) {
      tried[at] = true;
      CoordinatorReplica& replica = *replicas_[at];
      UnaryCaller::Trailer leader{kLeaderTrailer, ""};
      absl::StatusOr<Response> result = replica.Call(method, request, deadline, &leader);
      if (result.ok()) result = CheckEpoch(replica.address(), std::move(result).value());
      if (result.ok()) {
        current_.store(at);
        return result;
      }
      const absl::StatusCode code = result.status().code();
      if (code != absl::StatusCode::kUnavailable && code != absl::StatusCode::kDeadlineExceeded) {
        return result;
      }
      last = result.status();
      const size_t next = NextReplica(at, leader.value, tried);
      if (next == at) return result;  // every replica tried
      // Later calls start there too; after DEADLINE_EXCEEDED the call's time is spent.
      current_.store(next);
      if (code == absl::StatusCode::kDeadlineExceeded || absl::Now() >= deadline) return result;
      at = next;
    }
    return last;
  }

  // `response` unless its epoch is lower than the highest seen (UNAVAILABLE, counted); raises
  // the highest seen.
  template <typename Response>
  absl::StatusOr<Response> CheckEpoch(const std::string& address, Response response) {
    const uint64_t epoch = ClientEpochOf(response);
    if (epoch == 0) return response;
    uint64_t highest = highest_epoch_.load();
    while (epoch > highest && !highest_epoch_.compare_exchange_weak(highest, epoch)) {
    }
    if (epoch >= highest) return response;
    stale_epoch_responses_.fetch_add(1);
    return absl::UnavailableError(absl::StrCat("coordinator ", address, ": epoch ", epoch,
                                               " is older than epoch ", highest,
                                               " already seen (a deposed leader)"));
  }

  // The replica to try after `at`: the named leader when it is one of ours and untried (a
  // peer's claim is checked against the list), else the next untried one in list order; `at`
  // when none is left.
  size_t NextReplica(size_t at, const std::string& leader, const std::vector<bool>& tried) const {
    for (size_t i = 0; i < replicas_.size() && !leader.empty(); ++i) {
      if (replicas_[i]->address() == leader && !tried[i]) return i;
    }
    for (size_t step = 1; step < replicas_.size(); ++step) {
      const size_t i = (at + step) % replicas_.size();
      if (!tried[i]) return i;
    }
    return at;
  }

  const absl::Duration rpc_timeout_;
  std::vector<std::unique_ptr<CoordinatorReplica>> replicas_;
  std::atomic<size_t> current_{0};
  std::atomic<uint64_t> highest_epoch_{0};
  std::atomic<uint64_t> stale_epoch_responses_{0};
};

}  // namespace

std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& addresses,
                                                            absl::Duration rpc_timeout,
                                                            const TlsConfig& tls) {
  absl::StatusOr<std::vector<std::string>> parsed = ParseAddressList("coordinator", addresses);
  // The flags were checked where they were parsed; a single address the check would refuse
  // (a gRPC target such as unix:PATH) is dialed as given, as before replicas.
  return std::make_unique<GrpcCoordinatorClient>(
      parsed.ok() ? *std::move(parsed) : std::vector<std::string>{addresses}, rpc_timeout, tls);
}

}  // namespace stoker
