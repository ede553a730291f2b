#include "tests/testing/rpc_probe.h"

#include <chrono>
#include <map>

#include "stoker/v1/coordinator.grpc.pb.h"
#include "stoker/v1/worker.grpc.pb.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(10);
}

// Calls one unary method with an empty request.
template <typename Request, typename Response, typename Method>
grpc::StatusCode Call(pb::Coordinator::Stub* stub, Method method) {
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  Response response;
  return (stub->*method)(&context, Request(), &response).error_code();
}

}  // namespace

const std::vector<std::string>& CoordinatorMethods() {
  static const auto* methods = new std::vector<std::string>{
      "OpenJob",         "GetJob",    "RegisterWorker", "WorkerHeartbeat", "LeaseTasks",
      "ClientHeartbeat", "GetStatus", "StartTrace",     "GetTrace"};
  return *methods;
}

grpc::StatusCode CallCoordinator(const std::string& address,
                                 const std::shared_ptr<grpc::ChannelCredentials>& credentials,
                                 const std::string& method) {
  auto stub = pb::Coordinator::NewStub(grpc::CreateChannel(address, credentials));
  using S = pb::Coordinator::Stub;
  if (method == "OpenJob") {
    return Call<pb::OpenJobRequest, pb::OpenJobResponse>(stub.get(), &S::OpenJob);
  } else if (method == "GetJob") {
    return Call<pb::GetJobRequest, pb::GetJobResponse>(stub.get(), &S::GetJob);
  } else if (method == "RegisterWorker") {
    return Call<pb::RegisterWorkerRequest, pb::RegisterWorkerResponse>(stub.get(),
                                                                       &S::RegisterWorker);
  } else if (method == "WorkerHeartbeat") {
    return Call<pb::WorkerHeartbeatRequest, pb::WorkerHeartbeatResponse>(stub.get(),
                                                                         &S::WorkerHeartbeat);
  } else if (method == "LeaseTasks") {
    return Call<pb::LeaseTasksRequest, pb::LeaseTasksResponse>(stub.get(), &S::LeaseTasks);
  } else if (method == "ClientHeartbeat") {
    return Call<pb::ClientHeartbeatRequest, pb::ClientHeartbeatResponse>(stub.get(),
                                                                         &S::ClientHeartbeat);
  } else if (method == "StartTrace") {
    return Call<pb::StartTraceRequest, pb::StartTraceResponse>(stub.get(), &S::StartTrace);
  } else if (method == "GetTrace") {
    return Call<pb::GetTraceRequest, pb::GetTraceResponse>(stub.get(), &S::GetTrace);
  }
  return Call<pb::GetStatusRequest, pb::GetStatusResponse>(stub.get(), &S::GetStatus);
}

grpc::StatusCode CallStreamBatches(const std::string& address,
                                   const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  auto stub = pb::Worker::NewStub(grpc::CreateChannel(address, credentials));
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  auto stream = stub->StreamBatches(&context);
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(999999);
  stream->Write(open);
  stream->WritesDone();
  pb::BatchMessage message;
  while (stream->Read(&message)) {
  }
  return stream->Finish().error_code();
}

grpc::StatusCode ExpectedCoordinatorCode(const std::string& method, Role role) {
  using C = grpc::StatusCode;
  constexpr C kStale = C::FAILED_PRECONDITION;  // Id 0 is of no incarnation (common/ids.h).
  // Per method: the roles allowed and what the logic answers them.
  static const auto* table = new std::map<std::string, std::map<Role, C>>{
      {"OpenJob", {{Role::kTrainer, C::INVALID_ARGUMENT}}},
      {"GetJob", {{Role::kWorker, kStale}, {Role::kTrainer, kStale}}},
      {"RegisterWorker", {{Role::kWorker, C::INVALID_ARGUMENT}}},
      {"WorkerHeartbeat", {{Role::kWorker, kStale}}},
      {"LeaseTasks", {{Role::kWorker, C::INVALID_ARGUMENT}}},
      {"ClientHeartbeat", {{Role::kTrainer, kStale}}},
      {"GetStatus", {{Role::kTrainer, C::OK}, {Role::kOperator, C::OK}, {Role::kScaler, C::OK}}},
      // seconds 0 is refused before the job is looked at.
      {"StartTrace",
       {{Role::kTrainer, C::INVALID_ARGUMENT}, {Role::kOperator, C::INVALID_ARGUMENT}}},
      {"GetTrace", {{Role::kTrainer, kStale}, {Role::kOperator, kStale}}},
  };
  const auto& allowed = table->at(method);
  const auto it = allowed.find(role);
  return it == allowed.end() ? C::PERMISSION_DENIED : it->second;
}

}  // namespace stoker
