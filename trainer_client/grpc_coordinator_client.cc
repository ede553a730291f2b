// gRPC glue for CoordinatorClient: deadlines and status conversion only.

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "common/grpc_status.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "trainer_client/coordinator_client.h"

namespace stoker {
namespace {

// Thread-safe (the stub is).
class GrpcCoordinatorClient : public CoordinatorClient {
 public:
  GrpcCoordinatorClient(std::string address, absl::Duration rpc_timeout)
      : context_("coordinator " + address),
        rpc_timeout_(rpc_timeout),
        stub_(v1::Coordinator::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

  absl::StatusOr<v1::OpenJobResponse> OpenJob(const v1::OpenJobRequest& request) override {
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::OpenJobResponse response;
    grpc::Status status = stub_->OpenJob(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status, context_);
    return response;
  }

  absl::StatusOr<v1::ClientHeartbeatResponse> ClientHeartbeat(
      const v1::ClientHeartbeatRequest& request) override {
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::ClientHeartbeatResponse response;
    grpc::Status status = stub_->ClientHeartbeat(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status, context_);
    return response;
  }

 private:
  void SetDeadline(grpc::ClientContext* context) const {
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(rpc_timeout_));
  }

  const std::string context_;
  const absl::Duration rpc_timeout_;
  const std::unique_ptr<v1::Coordinator::Stub> stub_;
};

}  // namespace

std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& address,
                                                            absl::Duration rpc_timeout) {
  return std::make_unique<GrpcCoordinatorClient>(address, rpc_timeout);
}

}  // namespace stoker
