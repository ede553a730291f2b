#ifndef STOKER_COORDINATOR_COORDINATOR_H_
#define STOKER_COORDINATOR_COORDINATOR_H_

// The coordinator's logic: one method per Coordinator RPC (proto/stoker/v1/coordinator.proto).
// CoordinatorService (gRPC glue) converts and calls these; tests call them directly.
//
// Protocol walk-through:
//   1. A trainer client calls OpenJob(name, spec) (idempotent by name) and learns the job id,
//      batches per rank and batch size in bytes.
//   2. Workers call RegisterWorker(address, cores), then WorkerHeartbeat every
//      heartbeat_interval. A worker silent for longer than worker_timeout is removed: its leased
//      tasks return to pending and its next heartbeat gets NOT_FOUND (register again).
//   3. A client streams from every live worker (ClientHeartbeat lists them) and gives each
//      credit; a worker with credit from (job, rank) calls LeaseTasks and receives tasks of that
//      rank in plan order, each leased for lease_duration. An expired lease returns its task to
//      pending (it may go to another worker); the old holder learns it in the drop_leases of its
//      next heartbeat.
//   4. A task is done when its client has the batch and says so: the client reports `consumed`
//      in its heartbeat, the one report that completes a task. It also acks to the worker,
//      which reports `delivered` in its own heartbeat: that only releases the worker's lease
//      (a lost worker's released leases do not return to pending; an unconfirmed one does at
//      its expiry). LeaseTasks says rank_finished, and ClientHeartbeat says
//      JOB_STATE_FINISHED, once everything is done.
//
// Ids (common/ids.h) carry the coordinator's incarnation, journaled with the state: a peer
// holding an id of a state this coordinator lost is refused with FAILED_PRECONDITION.
//   5. Hedging: a client whose consumer starves reports the missing tasks it needs as
//      `overdue`; each that is leased gets one backup lease (hedge_book.h), handed first to the
//      next LeaseTasks of that (job, rank) from another worker. First copy wins at the client.
//
// Liveness (lost workers, expired leases) is checked lazily at the start of every RPC against
// the injected clock, and by CheckLiveness(), which the server calls periodically.
//
// Every state change goes through ClusterState::Apply with a StateUpdate (see ApplyUpdate).
//
// Durability (docs/architecture.md, State and journal): with a StateStore, the durable updates
// (create_job, register_worker, remove_worker, complete_tasks) are added to the store as they are
// applied, and every RPC method returns only once everything it saw is durable (group commit:
// concurrent RPCs share an fsync), except LeaseTasks, which waits only when it answers
// rank_finished (a lease reveals no completion a crash could take back). Leases, heartbeats and
// liveness are soft state: after a restart every task that was leased is pending again (its batch
// may be produced twice; clients drop the duplicate by task id), and recovered workers get a full
// worker_timeout to heartbeat before they are removed. When the store grows past kCompactBytes it
// is replaced by a snapshot of the state.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/tls/principal.h"
#include "coordinator/cluster_state.h"
#include "coordinator/coordinator_client.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/coordinator_trace.h"
#include "coordinator/hedge_book.h"
#include "coordinator/job_validation.h"
#include "coordinator/probe_retire_scheduler.h"
#include "coordinator/state_store.h"
#include "coordinator/status_board.h"
#include "coordinator/tail_placement.h"
#include "coordinator/tenant_policy.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/journal.pb.h"
#include "stoker/v1/status.pb.h"

namespace stoker {

// Thread-safe: every method may be called concurrently.
class Coordinator {
 public:
  // The journal is compacted once it holds this many bytes.
  static constexpr uint64_t kCompactBytes = 1 << 20;

  // REQUIRES: config.Validate().ok(); `clock` and `store` (nullptr: nothing survives a restart)
  // outlive the coordinator. With a store, call Recover() before anything else. `open_source`
  // opens datasets (OpenJob, ProbeDatasets, upgrading a format-1 journal); nothing else does.
  Coordinator(const CoordinatorConfig& config, Clock* clock, StateStore* store,
              SourceFactory open_source);
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Replays the store into the (empty) state, gives every recovered worker until now +
  // worker_timeout to heartbeat, and compacts the store. Replay reads no dataset: a job whose
  // data is gone or unreachable is recovered all the same, and ProbeDatasets reports it to its
  // clients. Records of journal format 1 (STKJRNL1: create_job without its geometry) are
  // upgraded by opening the job's dataset once here, outside the lock. Errors: DATA_LOSS from
  // the store, or when a stored record does not apply ("journal record N does not apply: ...");
  // FAILED_PRECONDITION when a format-1 record cannot be upgraded because its dataset cannot be
  // opened (the message names format 1 and the job); INTERNAL when writing fails.
  absl::Status Recover();
  // Recover in two steps, for a replica that follows a leader before it leads
  // (coordinator/etcd/coordinator_replica.h): Replay applies stored updates (as Recover does,
  // format-1 records upgraded; DATA_LOSS naming the record that does not apply), and may be
  // called many times; FinishRecovery then does the rest of Recover once (recovered workers'
  // timeouts, dataset probes, the incarnation, and a compaction of the store).
  absl::Status Replay(std::vector<stoker::v1::StateUpdate> updates);
  absl::Status FinishRecovery();

  // Opens the dataset of every recovered job not yet probed (after Recover) whose next probe is
  // due, outside the lock, and compares what it finds with the journaled geometry. A failure, or
  // a dataset that changed (another sample count or batch geometry), becomes the job's
  // data_error in ClientHeartbeatResponse; it is retried every
  // ProbeRetireScheduler::kProbeInterval until the dataset opens and matches, then the error is
  // cleared and the job is not probed again. Called by the server's liveness thread, never on a
  // gRPC callback thread.
  void ProbeDatasets();

  // Creates the job or returns the existing one of that name. With resume_tokens, then restarts
  // the request's rank from them (plan/resume_plan.h): a durable resume_rank update revokes the
  // rank's leases and gives it the rest of its batches of the token's epoch, then the normal
  // plan; the response's `start` says where the rank starts. A different world size than the
  // tokens' is a different spec, so it needs a job name not in use (else ALREADY_EXISTS). Errors:
  //   INVALID_ARGUMENT  empty name ("name: ..."), a request over one of config's limits
  //                     (request_limits.h: name, pipeline, world size, epochs, batch size,
  //                     token count; the message names the flag), a token universe over
  //                     config.max_resume_batches, an invalid spec ("spec.<field>: ..."), a rank
  //                     outside the world size with tokens ("rank: ..."), or tokens that do not
  //                     resume this spec ("resume_tokens[i]: ...", see PlanResume).
  //   ALREADY_EXISTS    a job of that name exists with a different spec (message names it).
  //   RESOURCE_EXHAUSTED config.max_jobs jobs exist (the message names --max-jobs), or a new
  //                     job would take its tenant over max_jobs or max_ranks of the tenant
  //                     policy (OpenJobOverQuota names the quota and the tenant).
  //
  // Tenancy (common/tls/principal.h): the job belongs to scope.tenant, and names are looked up
  // within that tenant (two tenants may both run a job "train"). Every call below that names a
  // job answers a caller whose scope does not see it exactly as for a job that does not exist
  // (NOT_FOUND, same message): another tenant's jobs are not there for it. The default scope
  // sees every tenant (in-process callers, plaintext servers).
  absl::StatusOr<stoker::v1::OpenJobResponse> OpenJob(const stoker::v1::OpenJobRequest& request,
                                                      const TenantScope& scope = {});

  // NOT_FOUND for an unknown job id.
  absl::StatusOr<stoker::v1::GetJobResponse> GetJob(const stoker::v1::GetJobRequest& request,
                                                    const TenantScope& scope = {});

  // Adds a worker. A worker registering again with the address of a registered one replaces it
  // (it restarted): the old entry is removed and its leases return to pending.
  // INVALID_ARGUMENT for an empty address, cores 0, or an address or hybrid_client_id over
  // config.max_id_bytes.
  absl::StatusOr<stoker::v1::RegisterWorkerResponse> RegisterWorker(
      const stoker::v1::RegisterWorkerRequest& request);

  // Records the heartbeat, returns the `returned` leases to pending and releases the leases of
  // the `delivered` tasks (they stay out of pending until their client reports them consumed
  // or the lease expires; a worker's report never completes a task). Reported tasks that do
  // not fit any job (unknown job, outside the plan) are logged and ignored: they must not cost
  // the worker its liveness. drop_leases lists the worker's leases that expired since its last
  // heartbeat (their tasks went back to pending and may be leased to another worker), unless
  // done or leased to it again. drain is always false in this version. INVALID_ARGUMENT when
  // `jobs` or stats.job_rates has more than config.max_jobs entries.
  // NOT_FOUND when the worker is not registered (never was, or was removed after missing
  // heartbeats): the message tells it to register again. FAILED_PRECONDITION when its id is of
  // another incarnation (the coordinator lost its state): it must register again and never
  // use the old id. Every RPC naming a job or worker id of another incarnation gets
  // FAILED_PRECONDITION the same way (common/ids.h); an unknown id of this incarnation is
  // NOT_FOUND.
  absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> WorkerHeartbeat(
      const stoker::v1::WorkerHeartbeatRequest& request);

  // A reply that waits for the store, called once what its call changed or saw is durable
  // (StateStore::SyncThen): on this thread or on the store's, never under the coordinator's
  // lock. `request` must outlive the call of `done`.
  template <typename Response>
  using Then = absl::AnyInvocable<void(absl::StatusOr<Response>)>;
  // WorkerHeartbeat and ClientHeartbeat with no thread waiting for the store (the gRPC
  // handlers': on etcd a commit takes milliseconds and carries dozens of calls).
  void WorkerHeartbeat(const stoker::v1::WorkerHeartbeatRequest& request,
                       Then<stoker::v1::WorkerHeartbeatResponse> done);
  void ClientHeartbeat(const stoker::v1::ClientHeartbeatRequest& request, const TenantScope& scope,
                       Then<stoker::v1::ClientHeartbeatResponse> done);

  // Leases up to min(max_tasks, max_tasks_per_lease) pending tasks of (job, rank) to the worker,
  // in plan order (tasks returned by expired leases or lost workers first). Errors:
  //   INVALID_ARGUMENT  max_tasks 0 ("max_tasks: ..."), rank >= world size ("rank: ...").
  //   NOT_FOUND         unknown job, or unknown worker (register again).
  absl::StatusOr<stoker::v1::LeaseTasksResponse> LeaseTasks(
      const stoker::v1::LeaseTasksRequest& request);
  // LeaseTasks for a caller that must not block (a gRPC callback thread): nullopt, having done
  // nothing, when the lock is held; otherwise LeaseTasks' result and the journal sequence the
  // reply must wait for (0: none; else pass it to SyncStore, which blocks, before replying).
  template <typename Response>
  struct Pending {
    absl::StatusOr<Response> result;
    uint64_t sync_seq = 0;
  };
  using LeaseReply = Pending<stoker::v1::LeaseTasksResponse>;
  std::optional<LeaseReply> TryLeaseTasks(const stoker::v1::LeaseTasksRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the store holds everything up to `seq` durably (0, or no store: at once), then
  // compacts it when due (its file I/O outside the lock). UNAVAILABLE naming the journal's error
  // when it cannot (see StoreUsable).
  absl::Status SyncStore(uint64_t seq) ABSL_LOCKS_EXCLUDED(mu_);
  // SyncStore without waiting: `done` gets what SyncStore would return but a compaction's
  // error, which is logged (the compaction, when due, runs on this thread, after SyncThen).
  void SyncStoreThen(uint64_t seq, StateStore::SyncDone done) ABSL_LOCKS_EXCLUDED(mu_);
  // OK unless the store failed a write (it latches, journal.h); then UNAVAILABLE naming the
  // cause and saying to retry against a restarted coordinator. Every RPC but GetStatus answers
  // it, CheckLiveness does nothing, and the server reports NOT_SERVING on its health service
  // (its probes restart the process, which replays the journal).
  absl::Status StoreUsable() const;

  // Completes the `consumed` tasks and returns the live workers and the job's state. Errors:
  //   NOT_FOUND         unknown job.
  //   INVALID_ARGUMENT  rank >= world size ("rank: ..."), a client_id over config.max_id_bytes,
  //                     or a consumed or overdue task that is not of this job and rank or
  //                     outside the plan ("received[i]: ...", "overdue[i]: ..."); then nothing
  //                     of the request is applied.
  absl::StatusOr<stoker::v1::ClientHeartbeatResponse> ClientHeartbeat(
      const stoker::v1::ClientHeartbeatRequest& request, const TenantScope& scope = {});

  // The jobs `scope` sees with their ranks' latest reports and the advisor's verdict, and live
  // workers (their rates of the jobs `scope` sees).
  stoker::v1::GetStatusResponse GetStatus(const TenantScope& scope = {});

  // Batch timelines (the coordinator trace, coordinator_trace.h). StartTrace opens the job's
  // window: heartbeat responses to its workers and ranks carry TraceControl until it ends.
  // INVALID_ARGUMENT "seconds: ..." outside [1, --max-trace-seconds] (checked first);
  // NOT_FOUND (FAILED_PRECONDITION for another incarnation) for an unknown job;
  // RESOURCE_EXHAUSTED when too many jobs are traced, or a new window would take the job's
  // tenant over max_trace_windows (TraceOverQuota).
  absl::StatusOr<stoker::v1::StartTraceResponse> StartTrace(
      const stoker::v1::StartTraceRequest& request, const TenantScope& scope = {});
  // A page of the job's collected spans. INVALID_ARGUMENT "max_spans: ..." (checked first) or
  // "page_token: ..."; NOT_FOUND for an unknown job or one never traced.
  absl::StatusOr<stoker::v1::GetTraceResponse> GetTrace(const stoker::v1::GetTraceRequest& request,
                                                        const TenantScope& scope = {});

  // Removes workers silent for longer than worker_timeout (their leases return to pending),
  // returns expired leases to pending, and retires jobs (finished or abandoned) none of whose
  // clients heartbeated for job_idle_timeout: a journaled retire_job forgets the job (its name
  // may then be opened again as a new job), and workers that report holding it are told in
  // WorkerHeartbeatResponse.retired_jobs.
  void CheckLiveness();

  // The tenants' weights and quotas (coordinator/tenant_policy.h); replaced whole when the
  // policy file changes. Until set, every tenant has weight 1 and no quota.
  void SetTenantPolicy(std::shared_ptr<const TenantPolicy> policy) ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<const TenantPolicy> tenant_policy() const ABSL_LOCKS_EXCLUDED(mu_);

  // A tenant's use of its quotas (docs/decisions/0072-tenant-quotas.md), for the metrics.
  struct TenantQuotaUse {
    TenantUsage usage;  // its open jobs
    uint32_t traced_jobs = 0;
    TenantLimits limits;
    // Requests refused, by quota (a kQuota* name), since the coordinator started.
    std::map<std::string, uint64_t> refusals;
  };
  // By tenant: every tenant with an open job, a refusal or an entry in the policy.
  std::map<std::string, TenantQuotaUse> TenantQuotaUses() const ABSL_LOCKS_EXCLUDED(mu_);

  const CoordinatorConfig& config() const { return config_; }
  // The journal's figures; nullopt when the coordinator keeps its state in memory only.
  std::optional<StateStore::Stats> store_stats() const {
    if (store_ == nullptr) return std::nullopt;
    return store_->stats();
  }

  // Runs `fn` on the state under the lock: for tests and status output.
  template <typename Fn>
  auto InspectState(Fn fn) const {
    absl::MutexLock lock(&mu_);
    return fn(static_cast<const ClusterState&>(state_));
  }

 private:
  // The one place state changes; durable updates are added to the store.
  absl::Status ApplyUpdate(const stoker::v1::StateUpdate& update)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `method` under the lock: its result and the store's last sequence then.
  template <typename Response, typename Request>
  Pending<Response> RunLocked(absl::StatusOr<Response> (Coordinator::*method)(const Request&),
                              const Request& request) ABSL_LOCKS_EXCLUDED(mu_);
  // Runs `method` under the lock, then answers `done` once what it saw is durable (and compacts
  // the store when it is due); Durably waits for that answer.
  template <typename Response, typename Request>
  void DurablyThen(absl::StatusOr<Response> (Coordinator::*method)(const Request&),
                   const Request& request, Then<Response> done) ABSL_LOCKS_EXCLUDED(mu_);
  template <typename Response, typename Request>
  absl::StatusOr<Response> Durably(absl::StatusOr<Response> (Coordinator::*method)(const Request&),
                                   const Request& request) ABSL_LOCKS_EXCLUDED(mu_);
  // Compacts the store when it holds kCompactBytes since the last compaction and no other
  // thread compacts (the snapshot under the lock, the writes after it is released).
  absl::Status CompactIfDue() ABSL_LOCKS_EXCLUDED(mu_);
  // OpenJob's request, the job's geometry (computed outside the lock) and, with tokens, the
  // resume point computed from them.
  struct OpenJobArgs {
    const stoker::v1::OpenJobRequest* request = nullptr;
    // The tenant the job belongs to.
    std::string tenant;
    // The request's spec with its tail placed (tail_placement.h); the job records job_spec.
    TailPlacement placement;
    JobGeometry geometry;
    stoker::v1::ResumePoint start;
  };
  // The geometry of the job OpenJob opens: the journaled one when a job of that name and spec
  // exists, else computed from the dataset (I/O, without the lock).
  absl::StatusOr<JobGeometry> GeometryFor(const std::string& tenant, const std::string& name,
                                          const TailPlacement& placement) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives format-1 records (create_job without geometry) their geometry; see Recover.
  absl::Status UpgradeFormat1(std::vector<stoker::v1::StateUpdate>& updates)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status UpgradeCreateJob(size_t record, stoker::v1::CreateJobUpdate& job)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<stoker::v1::OpenJobResponse> OpenJobLocked(const OpenJobArgs& args)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<stoker::v1::GetJobResponse> GetJobLocked(const stoker::v1::GetJobRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<stoker::v1::RegisterWorkerResponse> RegisterWorkerLocked(
      const stoker::v1::RegisterWorkerRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> WorkerHeartbeatLocked(
      const stoker::v1::WorkerHeartbeatRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<stoker::v1::LeaseTasksResponse> LeaseTasksLocked(
      const stoker::v1::LeaseTasksRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // LeaseTasksLocked, and the sequence its reply waits for (only a rank_finished one waits).
  LeaseReply LeaseReplyLocked(const stoker::v1::LeaseTasksRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK when `task` is a task of `job` and of `rank`; otherwise INVALID_ARGUMENT starting with
  // `field` ("received[3]: ").
  absl::Status CheckTaskOfRankLocked(const stoker::v1::TaskId& task, const JobRecord& job,
                                     uint32_t rank, const std::string& field) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The registered workers as ClientHeartbeat lists them: shared and immutable, rebuilt only
  // after a worker registered or was removed, so that a heartbeat copies it into its response
  // outside the lock.
  using WorkerList = std::shared_ptr<const std::vector<WorkerRecord>>;
  WorkerList WorkerListLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ClientHeartbeat's response, less its workers, and the worker list to add to it.
  struct ClientHeartbeatReply {
    stoker::v1::ClientHeartbeatResponse response;
    WorkerList workers;
  };
  absl::StatusOr<ClientHeartbeatReply> ClientHeartbeatLocked(
      const stoker::v1::ClientHeartbeatRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A rank's reports count only from the client that holds it: the one that last reported for
  // it, while heard within worker_timeout (then another client takes over: a restarted
  // trainer). UNAVAILABLE (retry) for a heartbeat of another client meanwhile, so a trainer
  // cannot complete or hedge the tasks of a job and rank another live trainer consumes.
  absl::Status CheckRankHolderLocked(const stoker::v1::ClientHeartbeatRequest& request,
                                     const JobRecord& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK when the first kMaxOverdue of request.overdue are tasks of the request's job and rank;
  // else INVALID_ARGUMENT naming overdue[i].
  absl::Status CheckOverdueLocked(const stoker::v1::ClientHeartbeatRequest& request,
                                  const JobRecord& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues backup leases of the leased overdue tasks (checked by CheckOverdueLocked); forgets
  // hedges of done tasks.
  void HedgeOverdueLocked(const stoker::v1::ClientHeartbeatRequest& request, const JobRecord& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds to `response` up to `max` backup leases of the request's (job, rank) for its worker;
  // returns how many.
  size_t LeaseBackupsLocked(const stoker::v1::LeaseTasksRequest& request, size_t max,
                            stoker::v1::LeaseTasksResponse* response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // NOT_FOUND (FAILED_PRECONDITION for another incarnation) unless the job exists and `scope`
  // sees it; the same answer either way.
  absl::Status CheckJobVisible(uint64_t job_id, const TenantScope& scope) ABSL_LOCKS_EXCLUDED(mu_);
  // Jobs of `tenant` whose trace window is open now.
  uint32_t TracedJobsLocked(absl::string_view tenant) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts the refusal (metrics) and returns its status.
  absl::Status RefuseByQuotaLocked(const std::string& tenant, QuotaRefusal refusal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Overdue tasks looked at per heartbeat (the rest are ignored).
  static constexpr int kMaxOverdue = kMaxOverdueTasks;  // coordinator_client.h
  void CheckLivenessLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Retires (journaled) every job none of whose clients was heard from for job_idle_timeout.
  void RetireIdleJobsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Picks a random incarnation (common/ids.h) when the state has none; durable.
  void StartIncarnationLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RemoveWorkerLocked(uint64_t worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CompleteTasksLocked(const stoker::v1::CompleteTasksUpdate& update)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The state as one `restore` update, and the store's sequence it covers (takes the lock).
  StateStore::Snapshot TakeSnapshot() ABSL_LOCKS_EXCLUDED(mu_);

  const CoordinatorConfig config_;
  Clock* const clock_;
  StateStore* const store_;
  const SourceFactory open_source_;
  // One compaction at a time; a caller that finds one running leaves it the work.
  std::atomic<bool> compacting_{false};
  mutable absl::Mutex mu_;
  ClusterState state_ ABSL_GUARDED_BY(mu_);   // the replicated state (journaled updates)
  size_t replayed_ ABSL_GUARDED_BY(mu_) = 0;  // stored updates applied by Replay
  // Soft state beside it, each object owning its own: the dataset probes of recovered jobs and
  // the retirement of idle ones, the ranks' and workers' latest reports, the backup leases of
  // overdue tasks, the cached worker list, and the batch timelines.
  ProbeRetireScheduler probe_retire_ ABSL_GUARDED_BY(mu_);
  StatusBoard board_ ABSL_GUARDED_BY(mu_);
  HedgeBook hedges_ ABSL_GUARDED_BY(mu_);
  WorkerList worker_list_ ABSL_GUARDED_BY(mu_);  // null: rebuild (WorkerListLocked)
  std::shared_ptr<const TenantPolicy> tenant_policy_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<const TenantPolicy>();
  // Requests refused by a tenant quota, by (tenant, quota). Tenants are authenticated names.
  std::map<std::pair<std::string, std::string>, uint64_t> quota_refusals_ ABSL_GUARDED_BY(mu_);
  CoordinatorTrace trace_;  // thread-safe; its lock after mu_
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_H_
