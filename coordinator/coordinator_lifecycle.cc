// Coordinator: a job's life outside the RPCs: recovery from the store (replay, upgrade of
// format-1 journals), syncing and compacting the store, the probe of recovered jobs' datasets,
// the retirement of idle jobs, and liveness (silent workers removed, expired leases returned).
// See coordinator.h (Recover, SyncStore, ProbeDatasets, CheckLiveness).

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/coordinator.h"
#include "coordinator/tail_placement.h"

namespace stoker {
namespace {

// The geometry a recorded job was opened with: that of the batches its workers send (with a
// client tail, the uint8 part before it; coordinator.cc's GeometryFor), from its dataset (I/O).
absl::StatusOr<stoker::v1::JobGeometry> WorkerGeometry(const stoker::v1::JobSpec& recorded,
                                                       const SourceFactory& open_source) {
  ASSIGN_OR_RETURN(TailPlacement placement, PlaceTail(recorded));
  return ComputeJobGeometry(placement.worker_spec, open_source);
}

}  // namespace

using stoker::v1::StateUpdate;

namespace {

// The store's latched error as every RPC answers it: retrying is right once the coordinator
// has been restarted (its health service says NOT_SERVING until then).
absl::Status JournalUnavailable(const absl::Status& failure) {
  return absl::UnavailableError(absl::StrCat(
      "the coordinator's journal failed (", absl::StatusCodeToString(failure.code()), ": ",
      failure.message(), "); it accepts no changes until it is restarted: retry"));
}

}  // namespace

absl::Status Coordinator::StoreUsable() const {
  if (store_ == nullptr) return absl::OkStatus();
  const absl::Status failure = store_->failure();
  return failure.ok() ? failure : JournalUnavailable(failure);
}

absl::Status Coordinator::SyncStore(uint64_t seq) {
  if (store_ == nullptr || seq == 0) return absl::OkStatus();
  if (absl::Status synced = store_->Sync(seq); !synced.ok()) return JournalUnavailable(synced);
  return CompactIfDue();
}

void Coordinator::SyncStoreThen(uint64_t seq, StateStore::SyncDone done) {
  if (store_ == nullptr || seq == 0) return done(absl::OkStatus());
  store_->SyncThen(seq, [done = std::move(done)](absl::Status synced) mutable {
    done(synced.ok() ? synced : JournalUnavailable(synced));
  });
  if (absl::Status compacted = CompactIfDue(); !compacted.ok()) {
    STOKER_LOG(WARNING) << "compacting the store: " << compacted;
  }
}

absl::Status Coordinator::CompactIfDue() {
  if (store_->bytes_since_compact() < kCompactBytes || compacting_.exchange(true)) {
    return absl::OkStatus();
  }
  // The snapshot is taken under the lock; the file is written after it is released.
  absl::Status compacted = store_->Compact([this] { return TakeSnapshot(); });
  compacting_ = false;
  return compacted.ok() ? compacted : JournalUnavailable(compacted);
}

StateStore::Snapshot Coordinator::TakeSnapshot() {
  absl::MutexLock lock(&mu_);
  StateStore::Snapshot snapshot;
  *snapshot.update.mutable_restore() = state_.MakeSnapshot();
  snapshot.through = store_->last_added();
  return snapshot;
}

absl::Status Coordinator::UpgradeCreateJob(size_t record, stoker::v1::CreateJobUpdate& job) {
  if (job.has_geometry()) return absl::OkStatus();
  absl::StatusOr<stoker::v1::JobGeometry> geometry = WorkerGeometry(job.spec(), open_source_);
  if (!geometry.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "journal record ", record, " (job ", job.job_id(), " '", job.name(),
        "') is of journal format 1, which did not record a job's geometry, and upgrading it "
        "needs the job's dataset, which cannot be opened now: ",
        geometry.status().message(),
        ". Make the dataset reachable for one start (the journal is then rewritten in format 2), "
        "or start on a new journal"));
  }
  *job.mutable_geometry() = *std::move(geometry);
  return absl::OkStatus();
}

absl::Status Coordinator::UpgradeFormat1(std::vector<StateUpdate>& updates) {
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].has_create_job()) {
      RETURN_IF_ERROR(UpgradeCreateJob(i, *updates[i].mutable_create_job()));
    } else if (updates[i].has_restore()) {
      for (stoker::v1::CreateJobUpdate& job : *updates[i].mutable_restore()->mutable_jobs()) {
        RETURN_IF_ERROR(UpgradeCreateJob(i, job));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Coordinator::Recover() {
  if (store_ == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<StateUpdate> updates, store_->Load());
  RETURN_IF_ERROR(Replay(std::move(updates)));
  return FinishRecovery();
}

absl::Status Coordinator::Replay(std::vector<StateUpdate> updates) {
  RETURN_IF_ERROR(UpgradeFormat1(updates));
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < updates.size(); ++i) {
    if (absl::Status status = state_.Apply(updates[i]); !status.ok()) {
      return absl::DataLossError(
          absl::StrCat("journal record ", replayed_ + i, " does not apply: ", status.message()));
    }
  }
  replayed_ += updates.size();
  return absl::OkStatus();
}

absl::Status Coordinator::FinishRecovery() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  for (const WorkerRecord* worker : state_.Workers()) {
    StateUpdate heartbeat;
    heartbeat.mutable_worker_heartbeat()->set_worker_id(worker->id);
    heartbeat.mutable_worker_heartbeat()->set_now_unix_ms(absl::ToUnixMillis(now));
    RETURN_IF_ERROR(state_.Apply(heartbeat));
  }
  for (const JobRecord* job : state_.Jobs()) {
    probe_retire_.Recovered(job->id, state_.JobFinished(job->id), now);
  }
  StartIncarnationLocked();  // a new or pre-incarnation journal: journaled by the Compact below
  STOKER_LOG(INFO) << "recovered " << replayed_ << " journal records: " << state_.num_jobs()
                   << " jobs, " << state_.Workers().size() << " workers";
  StateUpdate snapshot;
  *snapshot.mutable_restore() = state_.MakeSnapshot();
  return store_->Compact(snapshot);
}

namespace {

// Empty when the dataset opens and gives the journaled geometry; otherwise why not.
std::string ProbeError(const JobRecord& job, const SourceFactory& open_source) {
  absl::StatusOr<stoker::v1::JobGeometry> found = WorkerGeometry(job.spec, open_source);
  if (!found.ok()) {
    return absl::StrCat("job ", job.id, " '", job.name,
                        "': its dataset cannot be opened: ", found.status().ToString());
  }
  absl::StatusOr<JobGeometry> now = CheckJobGeometry(job.spec, *found, "spec");
  if (!now.ok() || *now != job.geometry) {
    return absl::StrCat(
        "job ", job.id, " '", job.name, "': its dataset changed since the job was opened (",
        job.geometry.num_samples, " samples, ", job.geometry.batch_bytes, " bytes per batch then; ",
        found->num_samples(), " samples, ", found->batch_bytes(), " now): open a new job");
  }
  return std::string();
}

}  // namespace

void Coordinator::ProbeDatasets() {
  std::vector<JobRecord> due;
  const absl::Time now = clock_->Now();
  {
    absl::MutexLock lock(&mu_);
    for (uint64_t job_id : probe_retire_.ProbesDue(now)) {
      if (const JobRecord* job = state_.FindJob(job_id)) due.push_back(*job);
    }
  }
  for (const JobRecord& job : due) {
    const std::string error = ProbeError(job, open_source_);  // I/O, without the lock
    absl::MutexLock lock(&mu_);
    probe_retire_.RecordProbe(job.id, error, now);
  }
}

void Coordinator::RetireIdleJobsLocked(absl::Time now) {
  const std::vector<uint64_t> idle = probe_retire_.IdleJobs(now);
  for (uint64_t job_id : idle) {
    const JobRecord* job = state_.FindJob(job_id);
    probe_retire_.Forget(job_id);
    if (job == nullptr) continue;
    STOKER_LOG(INFO) << "retiring job " << ShortId(job_id) << " '" << job->name << "' ("
                     << (state_.JobFinished(job_id) ? "finished" : "abandoned")
                     << "): no client heartbeat for "
                     << absl::FormatDuration(config_.job_idle_timeout);
    StateUpdate update;
    update.mutable_retire_job()->set_job_id(job_id);
    if (absl::Status status = ApplyUpdate(update); !status.ok()) {
      STOKER_LOG(ERROR) << "retiring job " << job_id << ": " << status;
    }
    board_.ForgetJob(job_id);
    trace_.Forget(job_id);
  }
  if (!idle.empty()) hedges_.PruneStale(state_);
}

void Coordinator::CheckLiveness() {
  // A failed store makes nothing durable any more: the server reports NOT_SERVING instead.
  if (!StoreUsable().ok()) return;
  uint64_t seq = 0;
  {
    absl::MutexLock lock(&mu_);
    CheckLivenessLocked();
    if (store_ != nullptr) seq = store_->last_added();
  }
  if (absl::Status status = SyncStore(seq); !status.ok()) {
    STOKER_LOG(ERROR) << "journal: " << status;
  }
}

void Coordinator::CheckLivenessLocked() {
  const absl::Time now = clock_->Now();
  RetireIdleJobsLocked(now);
  for (uint64_t worker_id :
       state_.WorkersSilentSince(absl::ToUnixMillis(now - config_.worker_timeout))) {
    STOKER_LOG(WARNING) << "worker " << worker_id << " missed heartbeats for longer than "
                        << absl::FormatDuration(config_.worker_timeout)
                        << "; removing it and returning its leases";
    board_.CountLostWorker();
    absl::Status status = RemoveWorkerLocked(worker_id);
    if (!status.ok()) {
      STOKER_LOG(ERROR) << "removing worker " << worker_id << ": " << status;
    }
  }
  const int64_t now_ms = absl::ToUnixMillis(now);
  std::optional<int64_t> earliest = state_.EarliestLeaseExpiry();
  if (!earliest || *earliest > now_ms) return;
  StateUpdate update;
  update.mutable_expire_leases()->set_now_unix_ms(now_ms);
  absl::Status status = ApplyUpdate(update);
  if (!status.ok()) {
    STOKER_LOG(ERROR) << "expiring leases: " << status;
  }
}

absl::Status Coordinator::RemoveWorkerLocked(uint64_t worker_id) {
  StateUpdate update;
  update.mutable_remove_worker()->set_worker_id(worker_id);
  board_.ForgetWorker(worker_id);
  return ApplyUpdate(update);
}

}  // namespace stoker
