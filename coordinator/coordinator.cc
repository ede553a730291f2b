#include "coordinator/coordinator.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/request_limits.h"
#include "trace/trace_proto.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;
using stoker::v1::TaskId;

// Calls `start` with a reply callback, then waits for the reply (the blocking form of a call
// whose reply may come from the store's thread).
template <typename Response, typename Start>
absl::StatusOr<Response> CoordinatorAwait(Start start) {
  absl::Notification answered;
  absl::StatusOr<Response> reply;
  start([&](absl::StatusOr<Response> result) {
    reply = std::move(result);
    answered.Notify();
  });
  answered.WaitForNotification();
  return reply;
}
using trace::Stage;

// FAILED_PRECONDITION for an id minted by another incarnation of the coordinator (it lost its
// state since): the caller must not retry with it. OK otherwise.
absl::Status CheckIncarnation(absl::string_view what, uint64_t id, uint32_t incarnation) {
  if (IncarnationOf(id) == incarnation) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      what, " id ", id, " (", what, " ", ShortId(id), " of coordinator incarnation ",
      IncarnationName(IncarnationOf(id)), ") is not of this coordinator's incarnation ",
      IncarnationName(incarnation), ": the coordinator lost the state that id belonged to"));
}

absl::Status UnknownWorker(uint64_t worker_id, uint32_t incarnation, absl::Duration timeout) {
  RETURN_IF_ERROR(CheckIncarnation("worker", worker_id, incarnation));
  return absl::NotFoundError(absl::StrCat(
      "worker ", ShortId(worker_id), " is not registered (removed after missing heartbeats for ",
      absl::FormatDuration(timeout), "): register again"));
}

absl::Status UnknownJob(uint64_t job_id, uint32_t incarnation) {
  RETURN_IF_ERROR(CheckIncarnation("job", job_id, incarnation));
  return JobNotFound(job_id);
}

absl::Status CheckRank(uint32_t rank, const JobRecord& job) {
  if (rank < job.spec.world_size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("rank: ", rank, " is outside job '", job.name,
                                                 "' of world size ", job.spec.world_size()));
}

bool IsDurable(const StateUpdate& update) {
  switch (update.update_case()) {
    case StateUpdate::kCreateJob:
    case StateUpdate::kRegisterWorker:
    case StateUpdate::kRemoveWorker:
    case StateUpdate::kCompleteTasks:
    case StateUpdate::kRestore:
    case StateUpdate::kResumeRank:
    case StateUpdate::kStartIncarnation:
    case StateUpdate::kRetireJob:
      return true;
    default:
      return false;
  }
}

}  // namespace

Coordinator::Coordinator(const CoordinatorConfig& config, Clock* clock, StateStore* store,
                         SourceFactory open_source)
    : config_(config),
      clock_(clock),
      store_(store),
      open_source_(std::move(open_source)),
      probe_retire_(config.job_idle_timeout),
      board_(config.advisor),
      trace_(CoordinatorTrace::Options{.max_seconds = config.max_trace_seconds,
                                       .max_spans_per_job = config.max_trace_spans,
                                       .clock = clock}) {
  if (store_ == nullptr) {
    absl::MutexLock lock(&mu_);
    StartIncarnationLocked();
  }
}

void Coordinator::StartIncarnationLocked() {
  if (state_.incarnation() != 0) return;
  absl::BitGen random;
  StateUpdate update;
  update.mutable_start_incarnation()->set_incarnation(
      absl::Uniform<uint32_t>(absl::IntervalClosed, random, 1, UINT32_MAX));
  if (absl::Status status = ApplyUpdate(update); !status.ok()) {
    STOKER_LOG(ERROR) << "starting an incarnation: " << status;  // cannot happen: checked above
  }
  STOKER_LOG(INFO) << "coordinator incarnation " << IncarnationName(state_.incarnation())
                   << " (the upper half of every job and worker id it mints)";
}

absl::Status Coordinator::ApplyUpdate(const StateUpdate& update) {
  RETURN_IF_ERROR(state_.Apply(update));
  if (update.has_register_worker() || update.has_remove_worker() || update.has_restore()) {
    worker_list_ = nullptr;
  }
  if (store_ != nullptr && IsDurable(update)) store_->Add(update);
  return absl::OkStatus();
}

template <typename Response, typename Request>
Coordinator::Pending<Response> Coordinator::RunLocked(
    absl::StatusOr<Response> (Coordinator::*method)(const Request&), const Request& request) {
  Pending<Response> pending;
  absl::MutexLock lock(&mu_);
  pending.result = (this->*method)(request);
  if (store_ != nullptr) pending.sync_seq = store_->last_added();
  return pending;
}

template <typename Response, typename Request>
void Coordinator::DurablyThen(absl::StatusOr<Response> (Coordinator::*method)(const Request&),
                              const Request& request, Then<Response> done) {
  if (absl::Status usable = StoreUsable(); !usable.ok()) return done(usable);
  Pending<Response> pending = RunLocked(method, request);
  SyncStoreThen(pending.sync_seq, [result = std::move(pending.result),
                                   done = std::move(done)](absl::Status synced) mutable {
    if (!synced.ok()) return done(synced);
    done(std::move(result));
  });
}

template <typename Response, typename Request>
absl::StatusOr<Response> Coordinator::Durably(
    absl::StatusOr<Response> (Coordinator::*method)(const Request&), const Request& request) {
  return CoordinatorAwait<Response>(
      [&](Then<Response> done) { DurablyThen(method, request, std::move(done)); });
}

absl::StatusOr<stoker::v1::GetJobResponse> Coordinator::GetJob(
    const stoker::v1::GetJobRequest& request, const TenantScope& scope) {
  RETURN_IF_ERROR(CheckJobVisible(request.job_id(), scope));
  return Durably(&Coordinator::GetJobLocked, request);
}

absl::StatusOr<stoker::v1::RegisterWorkerResponse> Coordinator::RegisterWorker(
    const stoker::v1::RegisterWorkerRequest& request) {
  RETURN_IF_ERROR(CheckRegisterWorkerLimits(request, config_));
  return Durably(&Coordinator::RegisterWorkerLocked, request);
}

absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> Coordinator::WorkerHeartbeat(
    const stoker::v1::WorkerHeartbeatRequest& request) {
  return CoordinatorAwait<stoker::v1::WorkerHeartbeatResponse>(
      [&](Then<stoker::v1::WorkerHeartbeatResponse> done) {
        WorkerHeartbeat(request, std::move(done));
      });
}

void Coordinator::WorkerHeartbeat(const stoker::v1::WorkerHeartbeatRequest& request,
                                  Then<stoker::v1::WorkerHeartbeatResponse> done) {
  if (absl::Status limits = CheckWorkerHeartbeatLimits(request, config_); !limits.ok()) {
    return done(limits);
  }
  DurablyThen(&Coordinator::WorkerHeartbeatLocked, request, std::move(done));
}

absl::StatusOr<stoker::v1::LeaseTasksResponse> Coordinator::LeaseTasks(
    const stoker::v1::LeaseTasksRequest& request) {
  // Leases are soft state, and a lease never reveals a completion a crash could take back (a
  // task whose completion is lost is pending again, as its lease said it was): only a reply
  // saying rank_finished waits for the journal. So LeaseTasks does not queue behind the group
  // commit of other calls' completions.
  LeaseReply reply;
  {
    absl::MutexLock lock(&mu_);
    reply = LeaseReplyLocked(request);
  }
  RETURN_IF_ERROR(SyncStore(reply.sync_seq));
  return std::move(reply.result);
}

std::optional<Coordinator::LeaseReply> Coordinator::TryLeaseTasks(
    const stoker::v1::LeaseTasksRequest& request) {
  if (!mu_.TryLock()) return std::nullopt;
  LeaseReply reply = LeaseReplyLocked(request);
  mu_.Unlock();
  return reply;
}

Coordinator::LeaseReply Coordinator::LeaseReplyLocked(
    const stoker::v1::LeaseTasksRequest& request) {
  LeaseReply reply;
  if (absl::Status usable = StoreUsable(); !usable.ok()) {
    reply.result = usable;
    return reply;
  }
  reply.result = LeaseTasksLocked(request);
  if (store_ != nullptr && reply.result.ok() && reply.result->rank_finished()) {
    reply.sync_seq = store_->last_added();
  }
  return reply;
}

absl::StatusOr<stoker::v1::ClientHeartbeatResponse> Coordinator::ClientHeartbeat(
    const stoker::v1::ClientHeartbeatRequest& request, const TenantScope& scope) {
  return CoordinatorAwait<stoker::v1::ClientHeartbeatResponse>(
      [&](Then<stoker::v1::ClientHeartbeatResponse> done) {
        ClientHeartbeat(request, scope, std::move(done));
      });
}

void Coordinator::ClientHeartbeat(const stoker::v1::ClientHeartbeatRequest& request,
                                  const TenantScope& scope,
                                  Then<stoker::v1::ClientHeartbeatResponse> done) {
  const int64_t received_ns = trace_.Now();
  absl::Status checked = CheckClientHeartbeatLimits(request, config_);
  // Job ids are never reused, so a job seen here is the job the heartbeat then reports on.
  if (checked.ok()) checked = CheckJobVisible(request.job_id(), scope);
  if (checked.ok()) checked = StoreUsable();
  if (!checked.ok()) return done(checked);
  Pending<ClientHeartbeatReply> pending = RunLocked(&Coordinator::ClientHeartbeatLocked, request);
  if (pending.result.ok()) {
    // Outside the lock, and before waiting for the store rather than on the thread that
    // answers many calls: a thousand workers make this the largest part of the call.
    for (const WorkerRecord& worker : *pending.result->workers) {
      if (!worker.hybrid_client_id.empty() && worker.hybrid_client_id != request.client_id()) {
        continue;  // Another trainer's own threads (hybrid mode).
      }
      stoker::v1::WorkerInfo* info = pending.result->response.add_workers();
      info->set_worker_id(worker.id);
      info->set_address(worker.address);
      info->set_cores(worker.cores);
    }
  }
  SyncStoreThen(pending.sync_seq, [this, &request, received_ns, reply = std::move(pending.result),
                                   done = std::move(done)](absl::Status synced) mutable {
    if (!synced.ok()) return done(synced);
    if (!reply.ok()) return done(reply.status());
    // When the answer goes out: its clock stamps time the reply.
    trace_.AnswerClientHeartbeat(request, *reply->workers, received_ns, &reply->response);
    done(std::move(reply->response));
  });
}

Coordinator::WorkerList Coordinator::WorkerListLocked() {
  if (worker_list_ == nullptr) {
    auto workers = std::make_shared<std::vector<WorkerRecord>>();
    for (const WorkerRecord* worker : state_.Workers()) workers->push_back(*worker);
    worker_list_ = std::move(workers);
  }
  return worker_list_;
}

absl::StatusOr<stoker::v1::GetJobResponse> Coordinator::GetJobLocked(
    const stoker::v1::GetJobRequest& request) {
  const JobRecord* job = state_.FindJob(request.job_id());
  if (job == nullptr) return UnknownJob(request.job_id(), state_.incarnation());
  stoker::v1::GetJobResponse response;
  response.set_name(job->name);
  response.set_tenant(job->tenant);
  // The workers run the job's spec up to its tail; the recorded spec always places again.
  ASSIGN_OR_RETURN(TailPlacement placement, PlaceTail(job->spec));
  *response.mutable_spec() = std::move(placement.worker_spec);
  response.set_batches_per_epoch_per_rank(job->geometry.batches_per_rank);
  response.set_batch_bytes(job->geometry.batch_bytes);
  return response;
}

absl::StatusOr<stoker::v1::RegisterWorkerResponse> Coordinator::RegisterWorkerLocked(
    const stoker::v1::RegisterWorkerRequest& request) {
  if (request.address().empty()) {
    return absl::InvalidArgumentError("address: must be set (host:port)");
  }
  if (request.cores() == 0) return absl::InvalidArgumentError("cores: must be > 0");
  CheckLivenessLocked();
  if (const WorkerRecord* old = state_.FindWorkerByAddress(request.address())) {
    STOKER_LOG(INFO) << "worker at " << request.address() << " registered again; dropping its "
                     << "old id " << old->id;
    RETURN_IF_ERROR(RemoveWorkerLocked(old->id));
  }
  StateUpdate update;
  stoker::v1::RegisterWorkerUpdate* reg = update.mutable_register_worker();
  reg->set_worker_id(state_.next_worker_id());
  reg->set_address(request.address());
  reg->set_cores(request.cores());
  reg->set_now_unix_ms(absl::ToUnixMillis(clock_->Now()));
  reg->set_hybrid_client_id(request.hybrid_client_id());
  reg->set_pool(request.pool());
  RETURN_IF_ERROR(ApplyUpdate(update));
  STOKER_LOG(INFO) << "worker " << ShortId(reg->worker_id()) << " registered at "
                   << request.address() << " with " << request.cores() << " cores"
                   << (request.hybrid_client_id().empty()
                           ? ""
                           : " for client " + request.hybrid_client_id() + " only");
  stoker::v1::RegisterWorkerResponse response;
  response.set_worker_id(reg->worker_id());
  response.set_heartbeat_interval_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(config_.heartbeat_interval)));
  return response;
}

absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> Coordinator::WorkerHeartbeatLocked(
    const stoker::v1::WorkerHeartbeatRequest& request) {
  CheckLivenessLocked();
  const uint64_t worker_id = request.worker_id();
  if (state_.FindWorker(worker_id) == nullptr) {
    return UnknownWorker(worker_id, state_.incarnation(), config_.worker_timeout);
  }
  stoker::v1::WorkerHeartbeatResponse response;
  for (TaskId& task : state_.RevokedLeases(worker_id)) {
    *response.add_drop_leases() = std::move(task);
  }
  for (uint64_t job_id : request.jobs()) {
    const JobRecord* job = state_.FindJob(job_id);
    if (job == nullptr) {
      response.add_retired_jobs(job_id);
    } else if (!response.tenants().contains(job->tenant)) {
      const TenantLimits& limits = tenant_policy_->For(job->tenant);
      stoker::v1::WorkerTenantShare& share = (*response.mutable_tenants())[job->tenant];
      share.set_weight(limits.weight);
      share.set_max_prefetch_bytes_per_worker(limits.max_prefetch_bytes_per_worker);
    }
  }
  StateUpdate heartbeat;
  heartbeat.mutable_worker_heartbeat()->set_worker_id(worker_id);
  heartbeat.mutable_worker_heartbeat()->set_now_unix_ms(absl::ToUnixMillis(clock_->Now()));
  RETURN_IF_ERROR(ApplyUpdate(heartbeat));
  trace_.AnswerWorkerHeartbeat(request, &response);
  board_.RecordWorker(worker_id, request.stats(), clock_->Now());
  if (request.returned_size() > 0) {
    StateUpdate returned;
    returned.mutable_return_leases()->set_worker_id(worker_id);
    for (const TaskId& task : request.returned()) {
      if (state_.RankOfTask(task).ok()) *returned.mutable_return_leases()->add_tasks() = task;
    }
    RETURN_IF_ERROR(ApplyUpdate(returned));
  }

  // Delivered tasks only release this worker's leases: the client's received report is the one
  // thing that completes a task (docs/architecture.md, Delivery guarantee).
  StateUpdate release;
  release.mutable_release_leases()->set_worker_id(worker_id);
  int ignored = 0;
  for (const TaskId& task : request.delivered()) {
    absl::StatusOr<uint32_t> rank = state_.RankOfTask(task);
    if (rank.ok()) {
      *release.mutable_release_leases()->add_tasks() = task;
    } else if (ignored++ == 0) {
      STOKER_LOG(WARNING) << "worker " << worker_id
                          << " reported a task that fits no job: " << rank.status().message();
    }
  }
  if (ignored > 1) {
    STOKER_LOG(WARNING) << "worker " << worker_id << ": ignored " << ignored
                        << " delivered tasks in all";
  }
  if (release.release_leases().tasks_size() > 0) RETURN_IF_ERROR(ApplyUpdate(release));
  return response;
}

absl::StatusOr<stoker::v1::LeaseTasksResponse> Coordinator::LeaseTasksLocked(
    const stoker::v1::LeaseTasksRequest& request) {
  if (request.max_tasks() == 0) return absl::InvalidArgumentError("max_tasks: must be > 0");
  CheckLivenessLocked();
  const JobRecord* job = state_.FindJob(request.job_id());
  if (job == nullptr) return UnknownJob(request.job_id(), state_.incarnation());
  RETURN_IF_ERROR(CheckRank(request.rank(), *job));
  if (state_.FindWorker(request.worker_id()) == nullptr) {
    return UnknownWorker(request.worker_id(), state_.incarnation(), config_.worker_timeout);
  }
  const uint32_t max = std::min(request.max_tasks(), config_.max_tasks_per_lease);
  stoker::v1::LeaseTasksResponse response;
  // Backup leases first (hedge_book.h): soft state, not in the cluster state.
  const size_t backups = LeaseBackupsLocked(request, max, &response);
  std::vector<TaskId> tasks = backups >= max
                                  ? std::vector<TaskId>()
                                  : state_.PendingTasks(job->id, request.rank(), max - backups);
  if (!tasks.empty()) {
    const int64_t expires = absl::ToUnixMillis(clock_->Now() + config_.lease_duration);
    StateUpdate update;
    stoker::v1::LeaseTasksUpdate* lease = update.mutable_lease_tasks();
    lease->set_worker_id(request.worker_id());
    lease->set_expires_unix_ms(expires);
    for (const TaskId& task : tasks) *lease->add_tasks() = task;
    RETURN_IF_ERROR(ApplyUpdate(update));
    for (TaskId& task : tasks) {
      trace_.RecordEvent(Stage::kLeaseGranted, task);
      stoker::v1::Lease* out = response.add_leases();
      *out->mutable_task() = std::move(task);
      out->set_expires_unix_ms(expires);
    }
  }
  response.set_rank_finished(state_.RankFinished(request.job_id(), request.rank()));
  return response;
}

absl::Status Coordinator::CheckTaskOfRankLocked(const TaskId& task, const JobRecord& job,
                                                uint32_t rank, const std::string& field) const {
  if (task.job_id() != job.id) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, DescribeTask(task), " is not of job ", ShortId(job.id)));
  }
  absl::StatusOr<uint32_t> task_rank = state_.RankOfTask(task);
  if (!task_rank.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, task_rank.status().message()));
  }
  if (*task_rank != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, DescribeTask(task), " is of rank ", *task_rank, ", not ", rank));
  }
  return absl::OkStatus();
}

absl::Status Coordinator::CheckRankHolderLocked(const stoker::v1::ClientHeartbeatRequest& request,
                                                const JobRecord& job) const {
  const auto holder = board_.LastClient(job.id, request.rank());
  if (!holder.has_value() || holder->first == request.client_id()) return absl::OkStatus();
  const absl::Duration silent = clock_->Now() - holder->second;
  if (silent >= config_.worker_timeout) return absl::OkStatus();  // Taken over (a restart).
  return absl::UnavailableError(
      absl::StrCat("rank ", request.rank(), " of job '", job.name,
                   "' is held by another client, heard ", absl::FormatDuration(silent),
                   " ago: this client's reports are refused until that one has "
                   "been silent for ",
                   absl::FormatDuration(config_.worker_timeout), "; retry"));
}

absl::StatusOr<Coordinator::ClientHeartbeatReply> Coordinator::ClientHeartbeatLocked(
    const stoker::v1::ClientHeartbeatRequest& request) {
  CheckLivenessLocked();
  const JobRecord* job = state_.FindJob(request.job_id());
  if (job == nullptr) return UnknownJob(request.job_id(), state_.incarnation());
  RETURN_IF_ERROR(CheckRank(request.rank(), *job));
  RETURN_IF_ERROR(CheckRankHolderLocked(request, *job));
  // Everything is validated before anything is applied (completions are journaled).
  RETURN_IF_ERROR(CheckOverdueLocked(request, *job));
  stoker::v1::CompleteTasksUpdate complete;
  for (int i = 0; i < request.received_size(); ++i) {
    const TaskId& task = request.received(i);
    RETURN_IF_ERROR(
        CheckTaskOfRankLocked(task, *job, request.rank(), absl::StrCat("received[", i, "]: ")));
    *complete.add_tasks() = task;
  }
  for (const TaskId& task : complete.tasks()) trace_.RecordEvent(Stage::kConsumedReport, task);
  RETURN_IF_ERROR(CompleteTasksLocked(complete));
  HedgeOverdueLocked(request, *job);
  board_.RecordClient(job->id, request.rank(), request.client_id(), request.stats(), clock_->Now());
  probe_retire_.Heard(job->id, clock_->Now());
  ClientHeartbeatReply reply;
  reply.workers = WorkerListLocked();
  stoker::v1::ClientHeartbeatResponse& response = reply.response;
  response.set_state(state_.JobFinished(job->id) ? stoker::v1::JOB_STATE_FINISHED
                                                 : stoker::v1::JOB_STATE_RUNNING);
  if (const std::string* error = probe_retire_.DataError(job->id)) response.set_data_error(*error);
  return reply;
}

stoker::v1::GetStatusResponse Coordinator::GetStatus(const TenantScope& scope) {
  stoker::v1::GetStatusResponse status;
  uint64_t seq = 0;
  {
    absl::MutexLock lock(&mu_);
    CheckLivenessLocked();  // May remove lost workers: journaled like any change.
    status = board_.Build(state_, clock_->Now(), scope);
    if (store_ != nullptr) seq = store_->last_added();
  }
  if (absl::Status synced = SyncStore(seq); !synced.ok()) {
    STOKER_LOG(ERROR) << "journal: " << synced;
  }
  return status;
}

absl::StatusOr<stoker::v1::StartTraceResponse> Coordinator::StartTrace(
    const stoker::v1::StartTraceRequest& request, const TenantScope& scope) {
  RETURN_IF_ERROR(trace::CheckStartTraceRequest(request, config_.max_trace_seconds));
  RETURN_IF_ERROR(CheckJobVisible(request.job_id(), scope));
  absl::MutexLock lock(&mu_);  // so that two windows of a tenant cannot both pass its quota
  const JobRecord* job = state_.FindJob(request.job_id());
  // Extending an open window holds no more of the quota.
  if (job != nullptr && !trace_.Control(job->id).has_value()) {
    if (std::optional<QuotaRefusal> refusal = TraceOverQuota(
            job->tenant, tenant_policy_->For(job->tenant), TracedJobsLocked(job->tenant))) {
      return RefuseByQuotaLocked(job->tenant, *std::move(refusal));
    }
  }
  return trace_.Start(request);
}

absl::StatusOr<stoker::v1::GetTraceResponse> Coordinator::GetTrace(
    const stoker::v1::GetTraceRequest& request, const TenantScope& scope) {
  RETURN_IF_ERROR(trace::CheckGetTraceRequest(request));
  RETURN_IF_ERROR(CheckJobVisible(request.job_id(), scope));
  return trace_.Read(request);
}

absl::Status Coordinator::CheckJobVisible(uint64_t job_id, const TenantScope& scope) {
  RETURN_IF_ERROR(StoreUsable());  // a failed journal is every call's first answer
  absl::MutexLock lock(&mu_);
  const JobRecord* job = state_.FindJob(job_id);
  if (job != nullptr && scope.Sees(job->tenant)) return absl::OkStatus();
  return UnknownJob(job_id, state_.incarnation());
}

absl::Status Coordinator::CompleteTasksLocked(const stoker::v1::CompleteTasksUpdate& update) {
  if (update.tasks_size() == 0) return absl::OkStatus();
  StateUpdate wrapped;
  *wrapped.mutable_complete_tasks() = update;
  return ApplyUpdate(wrapped);
}

}  // namespace stoker
