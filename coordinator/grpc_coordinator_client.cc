// gRPC glue for CoordinatorClient: each method is one UnaryCaller call.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_settings.h"
#include "common/grpc_unary_caller.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using Stub = pb::Coordinator::Stub;

grpc::ChannelArguments KeepaliveArgs() {
  grpc::ChannelArguments args;
  ApplyClientKeepalive(&args);
  return args;
}

// Thread-safe. With TLS, a call that finds the coordinator UNAVAILABLE replaces the channel:
// gRPC 1.51's TLS channels that failed to connect (a coordinator restarting) were seen to hang
// in the next handshake for good, while a fresh channel connects at once
// (docs/decisions/0024-security-identity-roles-data-roots.md).
class GrpcCoordinatorClient : public CoordinatorClient {
 public:
  GrpcCoordinatorClient(const std::string& address, absl::Duration rpc_timeout,
                        const TlsConfig& tls)
      : address_(address),
        renew_on_unavailable_(!tls.insecure),
        credentials_(ChannelCredentials(tls, {Role::kCoordinator})),
        caller_("coordinator " + address, rpc_timeout),
        stub_(NewStub()) {}

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
  void Shutdown() override { caller_.Shutdown(); }

 private:
  std::shared_ptr<Stub> NewStub() const {
    return pb::Coordinator::NewStub(
        grpc::CreateCustomChannel(address_, credentials_, KeepaliveArgs()));
  }

  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request) {
    std::shared_ptr<Stub> stub;
    {
      absl::MutexLock lock(&mu_);
      stub = stub_;
    }
    absl::StatusOr<Response> result = caller_.Call(stub.get(), method, request);
    if (renew_on_unavailable_ && result.status().code() == absl::StatusCode::kUnavailable) {
      std::shared_ptr<Stub> fresh = NewStub();
      absl::MutexLock lock(&mu_);
      if (stub_ == stub) stub_ = std::move(fresh);  // Once per failed channel.
    }
    return result;
  }

  const std::string address_;
  const bool renew_on_unavailable_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  UnaryCaller caller_;
  absl::Mutex mu_;
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& address,
                                                            absl::Duration rpc_timeout,
                                                            const TlsConfig& tls) {
  return std::make_unique<GrpcCoordinatorClient>(address, rpc_timeout, tls);
}

}  // namespace stoker
