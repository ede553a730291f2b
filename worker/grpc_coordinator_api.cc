// gRPC glue for CoordinatorApi: each method is one UnaryCaller call.

#include <grpcpp/grpcpp.h>

#include "common/grpc_unary_caller.h"
#include "common/grpc_settings.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "worker/coordinator_api.h"

namespace stoker {
namespace {

grpc::ChannelArguments KeepaliveArgs() {
  grpc::ChannelArguments args;
  ApplyClientKeepalive(&args);
  return args;
}

namespace pb = ::stoker::v1;
using Stub = pb::Coordinator::Stub;

class GrpcCoordinatorApi : public CoordinatorApi {
 public:
  GrpcCoordinatorApi(const std::string& address, absl::Duration rpc_timeout)
      : caller_("coordinator " + address, rpc_timeout),
        stub_(pb::Coordinator::NewStub(
            grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                      KeepaliveArgs()))) {}

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
  void Shutdown() override { caller_.Shutdown(); }

 private:
  UnaryCaller caller_;
  const std::unique_ptr<Stub> stub_;
};

}  // namespace

std::unique_ptr<CoordinatorApi> NewGrpcCoordinatorApi(const std::string& address,
                                                      absl::Duration rpc_timeout) {
  return std::make_unique<GrpcCoordinatorApi>(address, rpc_timeout);
}

}  // namespace stoker
