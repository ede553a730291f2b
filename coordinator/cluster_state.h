#ifndef STOKER_COORDINATOR_CLUSTER_STATE_H_
#define STOKER_COORDINATOR_CLUSTER_STATE_H_

// The coordinator's data (docs/architecture.md, State and journal): jobs, workers and the progress
// of every (job, rank). It changes only through Apply(StateUpdate), so that replaying a journal of
// updates rebuilds it; Apply reads no clock (times come inside the updates), does no I/O (whatever
// comes from the outside world, such as a job's dataset size, comes inside the update too:
// job_geometry.h) and is deterministic, so replay never depends on a file or server being there.
//
// Task progress of one (job, rank). The rank's tasks, in plan order across epochs, form the
// sequence s = epoch * batches_per_rank + k, where k is the rank's k-th batch of the epoch
// (global batch g = k * world_size + rank). The state of each s is kept compactly:
//
//   s < done_watermark                 done
//   s in done (a set, s >= watermark)  done, out of order
//   s in leased                        leased to a worker until an expiry time
//   s in requeued                      was leased, the lease expired or its worker was lost
//   s >= next_unleased, none of above  never leased
//
// A rank resumed from tokens (resume_rank) has a different sequence: s < |batches| is
// batches[s] of the resume epoch e, then s = |batches| + (epoch - e - 1) * batches_per_rank + k
// for the later epochs. Both are a RankSequence (plan/rank_sequence.h), which the trainer client
// uses too. Tasks of the rank's past (epochs before e, batches of e that are not in
// the list) are "obsolete": done, and completing them is a no-op, so late acknowledgements of the
// rank's previous incarnation are harmless.
//
// PendingTasks hands out requeued tasks first (they are the oldest), then never-leased ones, so
// leases follow plan order. Completing a task that is not leased (acknowledged after its lease
// expired, or after a coordinator restart) removes it from wherever it is; completing it twice
// is harmless. The done set shrinks as the watermark advances, so memory follows the number of
// out-of-order tasks, not the job's length.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "coordinator/job_geometry.h"
#include "coordinator/job_validation.h"
#include "coordinator/lease_index.h"
#include "plan/rank_sequence.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/journal.pb.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// "job 1 epoch 0 batch 5", for messages.
std::string DescribeTask(const stoker::v1::TaskId& task);

// A job as opened. Plain data.
struct JobRecord {
  uint64_t id = 0;
  // The name is unique within the tenant (common/tls/principal.h) that owns the job.
  std::string tenant;
  std::string name;
  stoker::v1::JobSpec spec;
  // As OpenJob derived it from the dataset and journaled it (never recomputed here).
  JobGeometry geometry;
};

// What a tenant's open jobs hold, for its quotas (coordinator/tenant_policy.h). Plain data.
struct TenantUsage {
  uint32_t jobs = 0;
  // The sum of their world sizes.
  uint64_t ranks = 0;
};

// A registered worker. Plain data.
struct WorkerRecord {
  uint64_t id = 0;
  std::string address;
  uint32_t cores = 0;
  int64_t last_heartbeat_unix_ms = 0;
  // Set for a worker that serves only the client with this id (hybrid mode).
  std::string hybrid_client_id;
  // Its worker pool (RegisterWorkerRequest.pool); empty: the default pool.
  std::string pool;
};

// Counters of one (job, rank), for tests and status output. Plain data.
struct RankProgressSummary {
  // Tasks of the rank over all epochs.
  uint64_t total = 0;
  uint64_t done_watermark = 0;
  uint64_t next_unleased = 0;
  // Sizes of the done set (above the watermark), the requeued set and the lease map.
  uint64_t done_above_watermark = 0;
  uint64_t requeued = 0;
  uint64_t leased = 0;
};

// Thread-compatible, not thread-safe: the owner (Coordinator) serializes access.
class ClusterState {
 public:
  // Revoked leases remembered per worker until its next heartbeat; older ones are forgotten.
  static constexpr size_t kMaxRevokedPerWorker = 4096;
  // LeaseHolder of a lease its worker released (no worker id is 0).
  static constexpr uint64_t kReleased = LeaseIndex::kNoHolder;

  ClusterState() = default;
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // Applies one update, all of it or none of it. Errors (the state is then unchanged):
  //   INVALID_ARGUMENT    the update is malformed (no case set, id 0, a task outside its job's
  //                       plan, a spec or geometry that fails CheckJobGeometry, an empty
  //                       address, cores 0).
  //   NOT_FOUND           it names a job or worker that does not exist.
  //   ALREADY_EXISTS      create_job / register_worker with an id (or job name) in use.
  //   FAILED_PRECONDITION lease_tasks names a task that is not pending, or not the next
  //                       never-leased one of its rank (leases go in plan order).
  // Effects per case:
  //   create_job        adds the job with the geometry it carries (checked, never computed).
  //   register_worker   adds the worker, alive as of now_unix_ms.
  //   worker_heartbeat  sets its last heartbeat; forgets its revoked leases (reported by then).
  //   lease_tasks       leases the tasks to the worker until expires_unix_ms.
  //   complete_tasks    marks the tasks done, wherever they were.
  //   remove_worker     drops the worker; its leased tasks are requeued.
  //   expire_leases     requeues every lease expiring at or before now_unix_ms and records it
  //                     as revoked for its worker.
  //   return_leases     requeues the listed tasks that are leased to the worker (others are
  //                     ignored: done, or leased to another worker since).
  //   release_leases    the listed tasks leased to the worker stay leased until their expiry
  //                     but no longer to the worker (its client has them; only complete_tasks
  //                     makes them done). Others are ignored.
  //   retire_job        forgets the job: its progress, leases (and their indexes) and name.
  //   start_incarnation sets the incarnation (common/ids.h); INVALID_ARGUMENT for 0,
  //                     FAILED_PRECONDITION when the state has one.
  //   resume_rank       revokes the rank's leases (reported to their workers as drop_leases) and
  //                     restarts its progress with the given batches of the given epoch, then
  //                     the normal plan; INVALID_ARGUMENT for a rank, epoch or batch outside
  //                     the job (batches must be distinct and below BatchIndexLimit).
  //   restore           loads a snapshot; FAILED_PRECONDITION unless the state is empty.
  absl::Status Apply(const stoker::v1::StateUpdate& update);

  // The durable part of the state (jobs, done tasks, workers, next ids), such that applying it
  // as `restore` to an empty state gives the same jobs, progress and workers (no leases).
  stoker::v1::Snapshot MakeSnapshot() const;

  // --- Queries. Pointers stay valid until the next Apply. ---

  const JobRecord* FindJob(uint64_t job_id) const;
  // The job `tenant` opened under `name`.
  const JobRecord* FindJobByName(absl::string_view tenant, absl::string_view name) const;
  size_t num_jobs() const { return jobs_.size(); }
  // Every job, by id (ids are sparse: they need not start at 1 nor be consecutive).
  std::vector<const JobRecord*> Jobs() const;
  // What the open jobs of each tenant with one hold, by tenant: kept by create_job, retire_job
  // and restore, so that it follows the jobs through retirement and journal replay.
  const std::map<std::string, TenantUsage>& tenant_usage() const { return tenant_usage_; }
  // Zero for a tenant without an open job.
  TenantUsage UsageOf(absl::string_view tenant) const;
  // Ids the next create_job / register_worker should use: the next serial of this incarnation.
  uint64_t next_job_id() const { return std::max(next_job_id_, MakeId(incarnation_, 1)); }
  uint64_t next_worker_id() const { return std::max(next_worker_id_, MakeId(incarnation_, 1)); }
  // The incarnation (common/ids.h); 0 until start_incarnation.
  uint32_t incarnation() const { return incarnation_; }
  // Leases returned to pending (expired, or held by a removed worker) since the state began.
  uint64_t leases_requeued() const { return leases_requeued_; }

  const WorkerRecord* FindWorker(uint64_t worker_id) const;
  const WorkerRecord* FindWorkerByAddress(absl::string_view address) const;
  // Every registered worker, by id.
  std::vector<const WorkerRecord*> Workers() const;
  // Workers whose last heartbeat is before `cutoff_unix_ms`, by id (from an index: no scan).
  std::vector<uint64_t> WorkersSilentSince(int64_t cutoff_unix_ms) const;

  // The rank a task belongs to. NOT_FOUND for an unknown job; INVALID_ARGUMENT when the task is
  // outside the job's plan (epoch or batch index too large).
  absl::StatusOr<uint32_t> RankOfTask(const stoker::v1::TaskId& task) const;

  // Up to `max` tasks of (job, rank) that may be leased now, in plan order. Empty for an
  // unknown job or a rank outside its world size.
  std::vector<stoker::v1::TaskId> PendingTasks(uint64_t job_id, uint32_t rank, uint64_t max) const;
  // True when every task of (job, rank) in every epoch is done.
  bool RankFinished(uint64_t job_id, uint32_t rank) const;
  // True when every rank of the job is finished.
  bool JobFinished(uint64_t job_id) const;
  RankProgressSummary RankSummary(uint64_t job_id, uint32_t rank) const;
  // RankSummary of the job's ranks that have progress (a lease, a completion or a resume), by
  // rank: O(those ranks), not O(world size). Every other rank has all its tasks pending.
  std::vector<std::pair<uint32_t, RankProgressSummary>> ProgressedRankSummaries(
      uint64_t job_id) const;

  // True when the task is done (its batch reached the client).
  bool IsTaskDone(const stoker::v1::TaskId& task) const { return IsDone(task); }
  // The worker holding a lease on the task; nullopt when it is not leased (pending, done, or
  // outside every job). 0 (kReleased) for a lease its worker released.
  std::optional<uint64_t> LeaseHolder(const stoker::v1::TaskId& task) const;
  // Earliest expiry among all leases; nullopt when nothing is leased.
  std::optional<int64_t> EarliestLeaseExpiry() const;
  // Tasks currently leased to the worker, in (job, rank, plan) order (from the worker's index).
  std::vector<stoker::v1::TaskId> LeasesOf(uint64_t worker_id) const;
  // Leases of the worker that expired since its last heartbeat, minus those done or leased to
  // it again since.
  std::vector<stoker::v1::TaskId> RevokedLeases(uint64_t worker_id) const;

 private:
  struct Lease {
    uint64_t worker_id = 0;  // kReleased once the worker released it
    int64_t expires_unix_ms = 0;
  };
  using LeaseKey = LeaseIndex::Key;
  struct RankProgress {
    // The sequence of a resumed rank (see the file comment); unset for a plain rank.
    std::optional<RankSequence> resumed;
    uint64_t done_watermark = 0;
    uint64_t next_unleased = 0;
    std::set<uint64_t> done;
    std::set<uint64_t> requeued;
    std::map<uint64_t, Lease> leased;
  };
  struct Job {
    JobRecord record;
    std::map<uint32_t, RankProgress> ranks;  // created on first use
    // The ranks whose progress is resumed (a rank's tasks are found without a scan of them all).
    std::set<uint32_t> resumed_ranks;
  };
  struct Worker {
    WorkerRecord record;
    std::deque<stoker::v1::TaskId> revoked;
  };
  // Where a task sits in its job's per-rank sequences.
  struct TaskRef {
    uint64_t job_id = 0;
    uint32_t rank = 0;
    uint64_t seq = 0;
    // A task of the rank's past (before its resume): done; seq is meaningless.
    bool obsolete = false;
  };

  absl::Status ApplyCreateJob(const stoker::v1::CreateJobUpdate& update);
  absl::Status ApplyRegisterWorker(const stoker::v1::RegisterWorkerUpdate& update);
  absl::Status ApplyWorkerHeartbeat(const stoker::v1::WorkerHeartbeatUpdate& update);
  absl::Status ApplyLeaseTasks(const stoker::v1::LeaseTasksUpdate& update);
  absl::Status ApplyCompleteTasks(const stoker::v1::CompleteTasksUpdate& update);
  absl::Status ApplyRemoveWorker(const stoker::v1::RemoveWorkerUpdate& update);
  absl::Status ApplyExpireLeases(const stoker::v1::ExpireLeasesUpdate& update);
  absl::Status ApplyReturnLeases(const stoker::v1::ReturnLeasesUpdate& update);
  absl::Status ApplyReleaseLeases(const stoker::v1::ReleaseLeasesUpdate& update);
  absl::Status ApplyStartIncarnation(const stoker::v1::StartIncarnationUpdate& update);
  absl::Status ApplyRetireJob(const stoker::v1::RetireJobUpdate& update);
  absl::Status ApplyRestore(const stoker::v1::Snapshot& snapshot);
  absl::Status ApplyResumeRank(const stoker::v1::ResumeRankUpdate& update);

  // INVALID_ARGUMENT when the task is outside its job's plan; NOT_FOUND for an unknown job.
  absl::StatusOr<TaskRef> Locate(const stoker::v1::TaskId& task) const;
  bool IsDone(const stoker::v1::TaskId& task) const;
  // Whether sequence `seq` of a rank with `progress` (null: none yet) is done.
  static bool IsDoneAt(const RankProgress* progress, uint64_t seq);
  // The rank's sequence. `progress` may be null (a rank without progress follows the normal
  // plan).
  static RankSequence SequenceOf(const JobRecord& job, uint32_t rank, const RankProgress* progress);
  static stoker::v1::TaskId MakeTask(const JobRecord& job, uint32_t rank,
                                     const RankProgress* progress, uint64_t seq);
  static uint64_t TotalTasks(const JobRecord& job, const RankProgress* progress);
  // Smallest never-leased, not-done sequence >= from.
  static uint64_t FirstFresh(const RankProgress& progress, uint64_t from);
  const RankProgress* FindProgress(uint64_t job_id, uint32_t rank) const;

  // Requeues (or, with `revoke`, also records for its worker) the lease at `it`.
  void RequeueLease(const JobRecord& job, uint32_t rank, RankProgress& progress,
                    std::map<uint64_t, Lease>::iterator it, bool revoke);
  // Adds / removes a lease of (job, rank) and keeps lease_index_.
  void AddLease(uint64_t job_id, uint32_t rank, RankProgress& progress, uint64_t seq,
                const Lease& lease);
  void EraseLease(uint64_t job_id, uint32_t rank, RankProgress& progress,
                  std::map<uint64_t, Lease>::iterator it);
  // Calls `fn` for each of `tasks` leased to `worker_id` (others are skipped). INVALID_ARGUMENT
  // or NOT_FOUND (nothing is called) when a task does not fit its job.
  absl::Status ForEachLeaseOf(
      uint64_t worker_id, const google::protobuf::RepeatedPtrField<stoker::v1::TaskId>& tasks,
      absl::FunctionRef<void(Job&, uint32_t, RankProgress&, std::map<uint64_t, Lease>::iterator)>
          fn);
  void MarkDone(const TaskRef& ref);

  std::map<uint64_t, Job> jobs_;
  // By (tenant, name).
  absl::flat_hash_map<std::pair<std::string, std::string>, uint64_t> job_ids_by_name_;
  std::map<std::string, TenantUsage> tenant_usage_;
  std::map<uint64_t, Worker> workers_;
  // Every worker by (last heartbeat, id), so that silent workers are found without a scan.
  std::set<std::pair<int64_t, uint64_t>> workers_by_heartbeat_;
  // Every lease by expiry and by holder: expired ones and a lost worker's, without a scan.
  LeaseIndex lease_index_;
  uint32_t incarnation_ = 0;
  uint64_t next_job_id_ = 1;
  uint64_t next_worker_id_ = 1;
  uint64_t leases_requeued_ = 0;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_CLUSTER_STATE_H_
