#include "coordinator/coordinator_service.h"

#include <utility>

#include "common/grpc_status.h"

namespace stoker {
namespace {

// Finishes the call with `result`: on success its value becomes the response.
template <typename Response>
grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context,
                                absl::StatusOr<Response> result, Response* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (result.ok()) *response = std::move(result).value();
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* CoordinatorService::OpenJob(grpc::CallbackServerContext* context,
                                                      const stoker::v1::OpenJobRequest* request,
                                                      stoker::v1::OpenJobResponse* response) {
  return Reply(context, coordinator_->OpenJob(*request), response);
}

grpc::ServerUnaryReactor* CoordinatorService::GetJob(grpc::CallbackServerContext* context,
                                                     const stoker::v1::GetJobRequest* request,
                                                     stoker::v1::GetJobResponse* response) {
  return Reply(context, coordinator_->GetJob(*request), response);
}

grpc::ServerUnaryReactor* CoordinatorService::RegisterWorker(
    grpc::CallbackServerContext* context, const stoker::v1::RegisterWorkerRequest* request,
    stoker::v1::RegisterWorkerResponse* response) {
  return Reply(context, coordinator_->RegisterWorker(*request), response);
}

grpc::ServerUnaryReactor* CoordinatorService::WorkerHeartbeat(
    grpc::CallbackServerContext* context, const stoker::v1::WorkerHeartbeatRequest* request,
    stoker::v1::WorkerHeartbeatResponse* response) {
  return Reply(context, coordinator_->WorkerHeartbeat(*request), response);
}

grpc::ServerUnaryReactor* CoordinatorService::LeaseTasks(
    grpc::CallbackServerContext* context, const stoker::v1::LeaseTasksRequest* request,
    stoker::v1::LeaseTasksResponse* response) {
  return Reply(context, coordinator_->LeaseTasks(*request), response);
}

grpc::ServerUnaryReactor* CoordinatorService::ClientHeartbeat(
    grpc::CallbackServerContext* context, const stoker::v1::ClientHeartbeatRequest* request,
    stoker::v1::ClientHeartbeatResponse* response) {
  return Reply(context, coordinator_->ClientHeartbeat(*request), response);
}

grpc::ServerUnaryReactor* CoordinatorService::GetStatus(grpc::CallbackServerContext* context,
                                                        const stoker::v1::GetStatusRequest* request,
                                                        stoker::v1::GetStatusResponse* response) {
  return Reply(context, absl::StatusOr<stoker::v1::GetStatusResponse>(coordinator_->GetStatus()),
               response);
}

}  // namespace stoker
