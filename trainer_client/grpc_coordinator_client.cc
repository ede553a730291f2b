// gRPC glue for CoordinatorClient: each method is one UnaryCaller call.

#include <memory>
#include <string>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "common/grpc_unary_caller.h"
#include "common/grpc_settings.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "trainer_client/coordinator_client.h"

namespace stoker {
namespace {

grpc::ChannelArguments KeepaliveArgs() {
  grpc::ChannelArguments args;
  ApplyClientKeepalive(&args);
  return args;
}

// Thread-safe.
class GrpcCoordinatorClient : public CoordinatorClient {
 public:
  GrpcCoordinatorClient(const std::string& address, absl::Duration rpc_timeout)
      : caller_("coordinator " + address, rpc_timeout),
        stub_(v1::Coordinator::NewStub(
            grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                      KeepaliveArgs()))) {}

  absl::StatusOr<v1::OpenJobResponse> OpenJob(const v1::OpenJobRequest& request) override {
    return caller_.Call(stub_.get(), &v1::Coordinator::Stub::OpenJob, request);
  }

  absl::StatusOr<v1::ClientHeartbeatResponse> ClientHeartbeat(
      const v1::ClientHeartbeatRequest& request) override {
    return caller_.Call(stub_.get(), &v1::Coordinator::Stub::ClientHeartbeat, request);
  }

 private:
  UnaryCaller caller_;
  const std::unique_ptr<v1::Coordinator::Stub> stub_;
};

}  // namespace

std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& address,
                                                            absl::Duration rpc_timeout) {
  return std::make_unique<GrpcCoordinatorClient>(address, rpc_timeout);
}

}  // namespace stoker
