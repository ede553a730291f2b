#include "coordinator/coordinator_service.h"

#include <utility>

#include "absl/status/statusor.h"
#include "common/grpc_status.h"

namespace stoker {
namespace {

// Runs `call` (which blocks: the coordinator's mutex, the journal's sync, dataset I/O) on
// `executor` and finishes the gRPC call from there with its result; on success its value
// becomes the response. The callback thread returns at once.
// A caller whose role is not in `allowed` is answered at once with the gate's denial.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* Reply(const RoleGate& gate, const char* method,
                                std::initializer_list<Role> allowed, CallExecutor* executor,
                                grpc::CallbackServerContext* context, Response* response,
                                Call call) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status denied = gate.Check(*context, method, allowed).status(); !denied.ok()) {
    reactor->Finish(ToGrpcStatus(denied));
    return reactor;
  }
  const bool queued = executor->Schedule([reactor, response, call = std::move(call)]() mutable {
    absl::StatusOr<Response> result = call();
    if (result.ok()) *response = std::move(result).value();
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  if (!queued) {
    reactor->Finish(ToGrpcStatus(absl::UnavailableError(
        "coordinator overloaded: too many calls waiting (" + executor->name() + "); retry")));
  }
  return reactor;
}

}  // namespace

CoordinatorService::CoordinatorService(Coordinator* coordinator, const TlsConfig& tls)
    : coordinator_(coordinator),
      gate_(tls),
      calls_("calls", kCallThreads, kMaxQueuedCalls),
      leases_("LeaseTasks calls", kLeaseThreads, kMaxQueuedCalls),
      opens_("OpenJob calls", kOpenJobThreads, kMaxQueuedCalls) {}

CoordinatorService::~CoordinatorService() { Stop(); }

void CoordinatorService::Stop() {
  opens_.Stop();
  leases_.Stop();
  calls_.Stop();
}

grpc::ServerUnaryReactor* CoordinatorService::OpenJob(grpc::CallbackServerContext* context,
                                                      const stoker::v1::OpenJobRequest* request,
                                                      stoker::v1::OpenJobResponse* response) {
  return Reply(gate_, "OpenJob", {Role::kTrainer}, &opens_, context, response,
               [this, request] { return coordinator_->OpenJob(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::GetJob(grpc::CallbackServerContext* context,
                                                     const stoker::v1::GetJobRequest* request,
                                                     stoker::v1::GetJobResponse* response) {
  return Reply(gate_, "GetJob", {Role::kWorker, Role::kTrainer}, &calls_, context, response,
               [this, request] { return coordinator_->GetJob(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::RegisterWorker(
    grpc::CallbackServerContext* context, const stoker::v1::RegisterWorkerRequest* request,
    stoker::v1::RegisterWorkerResponse* response) {
  return Reply(gate_, "RegisterWorker", {Role::kWorker}, &calls_, context, response,
               [this, request] { return coordinator_->RegisterWorker(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::WorkerHeartbeat(
    grpc::CallbackServerContext* context, const stoker::v1::WorkerHeartbeatRequest* request,
    stoker::v1::WorkerHeartbeatResponse* response) {
  return Reply(gate_, "WorkerHeartbeat", {Role::kWorker}, &calls_, context, response,
               [this, request] { return coordinator_->WorkerHeartbeat(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::LeaseTasks(
    grpc::CallbackServerContext* context, const stoker::v1::LeaseTasksRequest* request,
    stoker::v1::LeaseTasksResponse* response) {
  return Reply(gate_, "LeaseTasks", {Role::kWorker}, &leases_, context, response,
               [this, request] { return coordinator_->LeaseTasks(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::ClientHeartbeat(
    grpc::CallbackServerContext* context, const stoker::v1::ClientHeartbeatRequest* request,
    stoker::v1::ClientHeartbeatResponse* response) {
  return Reply(gate_, "ClientHeartbeat", {Role::kTrainer}, &calls_, context, response,
               [this, request] { return coordinator_->ClientHeartbeat(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::GetStatus(grpc::CallbackServerContext* context,
                                                        const stoker::v1::GetStatusRequest* request,
                                                        stoker::v1::GetStatusResponse* response) {
  return Reply(
      gate_, "GetStatus", {Role::kOperator, Role::kTrainer}, &calls_, context, response,
      [this] { return absl::StatusOr<stoker::v1::GetStatusResponse>(coordinator_->GetStatus()); });
}

}  // namespace stoker
