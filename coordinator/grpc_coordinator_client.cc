// gRPC glue for CoordinatorClient: each method is one UnaryCaller call.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/grpc_settings.h"
#include "common/grpc_unary_caller.h"
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

class GrpcCoordinatorClient : public CoordinatorClient {
 public:
  GrpcCoordinatorClient(const std::string& address, absl::Duration rpc_timeout)
      : caller_("coordinator " + address, rpc_timeout),
        stub_(pb::Coordinator::NewStub(grpc::CreateCustomChannel(
            address, grpc::InsecureChannelCredentials(), KeepaliveArgs()))) {}

  absl::StatusOr<pb::OpenJobResponse> OpenJob(const pb::OpenJobRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::OpenJob, request);
  }
  absl::StatusOr<pb::ClientHeartbeatResponse> ClientHeartbeat(
      const pb::ClientHeartbeatRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::ClientHeartbeat, request);
  }
  absl::StatusOr<pb::RegisterWorkerResponse> RegisterWorker(
      const pb::RegisterWorkerRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::RegisterWorker, request);
  }
  absl::StatusOr<pb::WorkerHeartbeatResponse> WorkerHeartbeat(
      const pb::WorkerHeartbeatRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::WorkerHeartbeat, request);
  }
  absl::StatusOr<pb::LeaseTasksResponse> LeaseTasks(
      const pb::LeaseTasksRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::LeaseTasks, request);
  }
  absl::StatusOr<pb::GetJobResponse> GetJob(const pb::GetJobRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::GetJob, request);
  }
  absl::StatusOr<pb::GetStatusResponse> GetStatus(const pb::GetStatusRequest& request) override {
    return caller_.Call(stub_.get(), &Stub::GetStatus, request);
  }
  void Shutdown() override { caller_.Shutdown(); }

 private:
  UnaryCaller caller_;
  const std::unique_ptr<Stub> stub_;
};

}  // namespace

std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& address,
                                                            absl::Duration rpc_timeout) {
  return std::make_unique<GrpcCoordinatorClient>(address, rpc_timeout);
}

}  // namespace stoker
