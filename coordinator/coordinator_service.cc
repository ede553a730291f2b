#include "coordinator/coordinator_service.h"

#include <optional>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"

namespace stoker {
namespace {

// Whether a response carries coordinator_epoch (StartTrace's and GetTrace's do not).
template <typename Response, typename = void>
struct ServiceHasEpoch : std::false_type {};
template <typename Response>
struct ServiceHasEpoch<
    Response, std::void_t<decltype(std::declval<Response&>().set_coordinator_epoch(uint64_t{0}))>>
    : std::true_type {};

template <typename Response>
void ServiceStampEpoch(uint64_t epoch, Response* response) {
  if constexpr (ServiceHasEpoch<Response>::value) response->set_coordinator_epoch(epoch);
}

}  // namespace

// Finishes one call with a status, observing its latency since the handler was entered.
struct CoordinatorService::Finisher {
  CallLatencies* latencies;
  Clock* clock;
  grpc::ServerUnaryReactor* reactor;
  const char* method;
  absl::Time start;

  void operator()(const absl::Status& status) const {
    latencies->Observe(method, clock->Now() - start);
    reactor->Finish(ToGrpcStatus(status));
  }
};

// An admitted call: how to finish it, and what its caller may see.
struct CoordinatorService::Admitted {
  Finisher finish;
  TenantScope scope;
  uint64_t epoch;
};

std::optional<CoordinatorService::Admitted> CoordinatorService::Admit(
    const char* method, std::initializer_list<Role> allowed, grpc::CallbackServerContext* context,
    grpc::ServerUnaryReactor* reactor) {
  const Finisher finish{latencies_, clock_, reactor, method, clock_->Now()};
  absl::StatusOr<std::optional<Principal>> caller = gate_.Check(*context, method, allowed);
  if (!caller.ok()) {
    finish(caller.status());
    return std::nullopt;
  }
  const absl::StatusOr<uint64_t> epoch = leader_->Check(context);
  if (!epoch.ok()) {
    finish(epoch.status());
    return std::nullopt;
  }
  return Admitted{finish, TenantScope::Of(*caller), *epoch};
}

template <typename Response, typename Start>
void CoordinatorService::Schedule(CallExecutor* executor, const Finisher& finish, uint64_t epoch,
                                  Response* response, Start start) {
  const bool queued =
      executor->Schedule([this, response, finish, epoch, start = std::move(start)]() mutable {
        // A started call may hold its response until the store's commit (SyncThen): bounded.
        if (started_.fetch_add(1) >= kMaxStartedCalls) {
          --started_;
          finish(absl::UnavailableError(
              absl::StrCat("coordinator overloaded: ", kMaxStartedCalls,
                           " calls wait for the store (kMaxStartedCalls); retry")));
          return;
        }
        start([this, response, finish, epoch](absl::StatusOr<Response> result) {
          --started_;
          if (result.ok()) {
            *response = std::move(result).value();
            ServiceStampEpoch(epoch, response);
          }
          finish(result.status());
        });
      });
  if (!queued) {
    finish(absl::UnavailableError(absl::StrCat("coordinator overloaded: too many calls waiting (",
                                               executor->name(), "); retry")));
  }
}

template <typename Response, typename Start>
grpc::ServerUnaryReactor* CoordinatorService::ReplyThen(const char* method,
                                                        std::initializer_list<Role> allowed,
                                                        CallExecutor* executor,
                                                        grpc::CallbackServerContext* context,
                                                        Response* response, Start start) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();  // once: it resets the reactor
  std::optional<Admitted> admitted = Admit(method, allowed, context, reactor);
  if (admitted.has_value()) {
    Schedule(executor, admitted->finish, admitted->epoch, response,
             [start = std::move(start), scope = std::move(admitted->scope)](
                 Coordinator::Then<Response> done) mutable { start(scope, std::move(done)); });
  }
  return reactor;
}

template <typename Response, typename Call>
grpc::ServerUnaryReactor* CoordinatorService::Reply(const char* method,
                                                    std::initializer_list<Role> allowed,
                                                    CallExecutor* executor,
                                                    grpc::CallbackServerContext* context,
                                                    Response* response, Call call) {
  return ReplyThen(
      method, allowed, executor, context, response,
      [call = std::move(call)](const TenantScope& scope, Coordinator::Then<Response> done) mutable {
        done(call(scope));
      });
}

CoordinatorService::CoordinatorService(Coordinator* coordinator, CallLatencies* latencies,
                                       const TlsConfig& tls, Clock* clock, const LeaderGate* leader,
                                       int call_threads)
    : coordinator_(coordinator),
      latencies_(latencies),
      clock_(clock),
      gate_(tls),
      leader_(leader),
      calls_("calls", call_threads, kMaxQueuedCalls),
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
  return Reply(
      "OpenJob", {Role::kTrainer}, &opens_, context, response,
      [this, request](const TenantScope& scope) { return coordinator_->OpenJob(*request, scope); });
}

grpc::ServerUnaryReactor* CoordinatorService::GetJob(grpc::CallbackServerContext* context,
                                                     const stoker::v1::GetJobRequest* request,
                                                     stoker::v1::GetJobResponse* response) {
  return Reply(
      "GetJob", {Role::kWorker, Role::kTrainer}, &calls_, context, response,
      [this, request](const TenantScope& scope) { return coordinator_->GetJob(*request, scope); });
}

grpc::ServerUnaryReactor* CoordinatorService::RegisterWorker(
    grpc::CallbackServerContext* context, const stoker::v1::RegisterWorkerRequest* request,
    stoker::v1::RegisterWorkerResponse* response) {
  return Reply(
      "RegisterWorker", {Role::kWorker}, &calls_, context, response,
      [this, request](const TenantScope&) { return coordinator_->RegisterWorker(*request); });
}

grpc::ServerUnaryReactor* CoordinatorService::WorkerHeartbeat(
    grpc::CallbackServerContext* context, const stoker::v1::WorkerHeartbeatRequest* request,
    stoker::v1::WorkerHeartbeatResponse* response) {
  return ReplyThen("WorkerHeartbeat", {Role::kWorker}, &calls_, context, response,
                   [this, request](const TenantScope&,
                                   Coordinator::Then<stoker::v1::WorkerHeartbeatResponse> done) {
                     coordinator_->WorkerHeartbeat(*request, std::move(done));
                   });
}

grpc::ServerUnaryReactor* CoordinatorService::LeaseTasks(
    grpc::CallbackServerContext* context, const stoker::v1::LeaseTasksRequest* request,
    stoker::v1::LeaseTasksResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();  // once: it resets the reactor
  const std::optional<Admitted> admitted = Admit("LeaseTasks", {Role::kWorker}, context, reactor);
  if (!admitted.has_value()) return reactor;
  const Finisher* finish = &admitted->finish;
  const uint64_t epoch = admitted->epoch;
  std::optional<Coordinator::LeaseReply> now = coordinator_->TryLeaseTasks(*request);
  if (!now.has_value()) {  // the lock is held: wait for it on the lease pool
    Schedule(&leases_, *finish, epoch, response,
             [this, request](Coordinator::Then<LeaseTasksResponse> done) {
               done(coordinator_->LeaseTasks(*request));
             });
  } else if (now->sync_seq == 0) {  // answered here, no wait
    if (now->result.ok()) {
      *response = *std::move(now->result);
      ServiceStampEpoch(epoch, response);
    }
    (*finish)(now->result.status());
  } else {  // a rank_finished reply waits for the journal on the lease pool
    Schedule(&leases_, *finish, epoch, response,
             [this, reply = *std::move(now)](Coordinator::Then<LeaseTasksResponse> done) mutable {
               coordinator_->SyncStoreThen(reply.sync_seq,
                                           [result = std::move(reply.result),
                                            done = std::move(done)](absl::Status synced) mutable {
                                             if (!synced.ok()) return done(synced);
                                             done(std::move(result));
                                           });
             });
  }
  return reactor;
}

grpc::ServerUnaryReactor* CoordinatorService::ClientHeartbeat(
    grpc::CallbackServerContext* context, const stoker::v1::ClientHeartbeatRequest* request,
    stoker::v1::ClientHeartbeatResponse* response) {
  return ReplyThen("ClientHeartbeat", {Role::kTrainer}, &calls_, context, response,
                   [this, request](const TenantScope& scope,
                                   Coordinator::Then<stoker::v1::ClientHeartbeatResponse> done) {
                     coordinator_->ClientHeartbeat(*request, scope, std::move(done));
                   });
}

grpc::ServerUnaryReactor* CoordinatorService::GetStatus(grpc::CallbackServerContext* context,
                                                        const stoker::v1::GetStatusRequest* request,
                                                        stoker::v1::GetStatusResponse* response) {
  return Reply(
      "GetStatus", {Role::kOperator, Role::kTrainer, Role::kScaler}, &calls_, context, response,
      [this](const TenantScope& scope) {
        return absl::StatusOr<stoker::v1::GetStatusResponse>(coordinator_->GetStatus(scope));
      });
}

grpc::ServerUnaryReactor* CoordinatorService::StartTrace(
    grpc::CallbackServerContext* context, const stoker::v1::StartTraceRequest* request,
    stoker::v1::StartTraceResponse* response) {
  return Reply("StartTrace", {Role::kOperator, Role::kTrainer}, &calls_, context, response,
               [this, request](const TenantScope& scope) {
                 return coordinator_->StartTrace(*request, scope);
               });
}

grpc::ServerUnaryReactor* CoordinatorService::GetTrace(grpc::CallbackServerContext* context,
                                                       const stoker::v1::GetTraceRequest* request,
                                                       stoker::v1::GetTraceResponse* response) {
  return Reply("GetTrace", {Role::kOperator, Role::kTrainer}, &calls_, context, response,
               [this, request](const TenantScope& scope) {
                 return coordinator_->GetTrace(*request, scope);
               });
}

}  // namespace stoker
