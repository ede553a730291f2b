// gRPC glue for CoordinatorApi: each method sets a deadline, calls the stub and converts status.

#include <grpcpp/grpcpp.h>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "worker/coordinator_api.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

class GrpcCoordinatorApi : public CoordinatorApi {
 public:
  GrpcCoordinatorApi(const std::string& address, absl::Duration rpc_timeout)
      : address_(address),
        rpc_timeout_(rpc_timeout),
        stub_(pb::Coordinator::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

  absl::StatusOr<pb::RegisterWorkerResponse> RegisterWorker(
      const pb::RegisterWorkerRequest& request) override {
    return Call(&pb::Coordinator::Stub::RegisterWorker, request);
  }
  absl::StatusOr<pb::WorkerHeartbeatResponse> WorkerHeartbeat(
      const pb::WorkerHeartbeatRequest& request) override {
    return Call(&pb::Coordinator::Stub::WorkerHeartbeat, request);
  }
  absl::StatusOr<pb::LeaseTasksResponse> LeaseTasks(
      const pb::LeaseTasksRequest& request) override {
    return Call(&pb::Coordinator::Stub::LeaseTasks, request);
  }
  absl::StatusOr<pb::GetJobResponse> GetJob(const pb::GetJobRequest& request) override {
    return Call(&pb::Coordinator::Stub::GetJob, request);
  }

  void Shutdown() override {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (grpc::ClientContext* context : in_flight_) context->TryCancel();
  }

 private:
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (pb::Coordinator::Stub::*method)(grpc::ClientContext*, const Request&,
                                                    Response*),
      const Request& request) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + rpc_timeout_));
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return absl::CancelledError("worker is stopping");
      in_flight_.insert(&context);
    }
    Response response;
    grpc::Status status = (stub_.get()->*method)(&context, request, &response);
    {
      absl::MutexLock lock(&mu_);
      in_flight_.erase(&context);
    }
    if (!status.ok()) return FromGrpcStatus(status, "coordinator " + address_);
    return response;
  }

  const std::string address_;
  const absl::Duration rpc_timeout_;
  std::unique_ptr<pb::Coordinator::Stub> stub_;
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<grpc::ClientContext*> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<CoordinatorApi> NewGrpcCoordinatorApi(const std::string& address,
                                                      absl::Duration rpc_timeout) {
  return std::make_unique<GrpcCoordinatorApi>(address, rpc_timeout);
}

}  // namespace stoker
