#include "coordinator/cluster_state.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/tls/principal.h"
#include "plan/epoch_plan.h"

namespace stoker {

using stoker::v1::StateUpdate;
using stoker::v1::TaskId;

std::string DescribeTask(const TaskId& task) {
  return absl::StrCat("job ", ShortId(task.job_id()), " epoch ", task.epoch(), " batch ",
                      task.batch_index());
}

absl::Status ClusterState::Apply(const StateUpdate& update) {
  switch (update.update_case()) {
    case StateUpdate::kCreateJob:
      return ApplyCreateJob(update.create_job());
    case StateUpdate::kRegisterWorker:
      return ApplyRegisterWorker(update.register_worker());
    case StateUpdate::kWorkerHeartbeat:
      return ApplyWorkerHeartbeat(update.worker_heartbeat());
    case StateUpdate::kLeaseTasks:
      return ApplyLeaseTasks(update.lease_tasks());
    case StateUpdate::kCompleteTasks:
      return ApplyCompleteTasks(update.complete_tasks());
    case StateUpdate::kRemoveWorker:
      return ApplyRemoveWorker(update.remove_worker());
    case StateUpdate::kExpireLeases:
      return ApplyExpireLeases(update.expire_leases());
    case StateUpdate::kReturnLeases:
      return ApplyReturnLeases(update.return_leases());
    case StateUpdate::kRestore:
      return ApplyRestore(update.restore());
    case StateUpdate::kResumeRank:
      return ApplyResumeRank(update.resume_rank());
    case StateUpdate::kReleaseLeases:
      return ApplyReleaseLeases(update.release_leases());
    case StateUpdate::kStartIncarnation:
      return ApplyStartIncarnation(update.start_incarnation());
    case StateUpdate::kRetireJob:
      return ApplyRetireJob(update.retire_job());
    case StateUpdate::UPDATE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("state update: no update case set");
}

absl::Status ClusterState::ApplyCreateJob(const stoker::v1::CreateJobUpdate& update) {
  if (update.job_id() == 0) return absl::InvalidArgumentError("create_job.job_id: must be > 0");
  if (update.name().empty()) return absl::InvalidArgumentError("create_job.name: must be set");
  if (jobs_.count(update.job_id()) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("job id ", update.job_id(), " is in use"));
  }
  std::string tenant = update.tenant().empty() ? std::string(kDefaultTenant) : update.tenant();
  RETURN_IF_ERROR(CheckTenantName("create_job.tenant", tenant));
  std::pair<std::string, std::string> key(tenant, update.name());
  if (job_ids_by_name_.count(key) > 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", update.name(), "' of tenant ", tenant, " already exists"));
  }
  ASSIGN_OR_RETURN(JobGeometry geometry,
                   CheckJobGeometry(update.spec(), update.geometry(), "create_job"));
  Job& job = jobs_[update.job_id()];
  job.record.id = update.job_id();
  job.record.tenant = std::move(tenant);
  job.record.name = update.name();
  job.record.spec = update.spec();
  job.record.geometry = std::move(geometry);
  job_ids_by_name_[std::move(key)] = update.job_id();
  TenantUsage& usage = tenant_usage_[job.record.tenant];
  ++usage.jobs;
  usage.ranks += job.record.spec.world_size();
  next_job_id_ = std::max(next_job_id_, update.job_id() + 1);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyRegisterWorker(const stoker::v1::RegisterWorkerUpdate& update) {
  if (update.worker_id() == 0) {
    return absl::InvalidArgumentError("register_worker.worker_id: must be > 0");
  }
  if (update.address().empty()) {
    return absl::InvalidArgumentError("register_worker.address: must be set");
  }
  if (update.cores() == 0) return absl::InvalidArgumentError("register_worker.cores: must be > 0");
  if (workers_.count(update.worker_id()) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("worker id ", update.worker_id(), " is in use"));
  }
  WorkerRecord& record = workers_[update.worker_id()].record;
  record.id = update.worker_id();
  record.address = update.address();
  record.cores = update.cores();
  record.last_heartbeat_unix_ms = update.now_unix_ms();
  record.hybrid_client_id = update.hybrid_client_id();
  record.pool = update.pool();
  workers_by_heartbeat_.emplace(record.last_heartbeat_unix_ms, record.id);
  next_worker_id_ = std::max(next_worker_id_, update.worker_id() + 1);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyWorkerHeartbeat(const stoker::v1::WorkerHeartbeatUpdate& update) {
  auto it = workers_.find(update.worker_id());
  if (it == workers_.end()) {
    return absl::NotFoundError(absl::StrCat("worker ", update.worker_id(), " is not registered"));
  }
  int64_t& last = it->second.record.last_heartbeat_unix_ms;
  if (update.now_unix_ms() > last) {
    workers_by_heartbeat_.erase({last, update.worker_id()});
    last = update.now_unix_ms();
    workers_by_heartbeat_.emplace(last, update.worker_id());
  }
  it->second.revoked.clear();
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyCompleteTasks(const stoker::v1::CompleteTasksUpdate& update) {
  std::vector<TaskRef> refs;
  refs.reserve(update.tasks_size());
  for (const TaskId& task : update.tasks()) {
    ASSIGN_OR_RETURN(TaskRef ref, Locate(task));
    refs.push_back(ref);
  }
  for (const TaskRef& ref : refs) MarkDone(ref);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyStartIncarnation(const stoker::v1::StartIncarnationUpdate& update) {
  if (update.incarnation() == 0) {
    return absl::InvalidArgumentError("start_incarnation.incarnation: must be > 0");
  }
  if (incarnation_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("start_incarnation: the state has incarnation ", incarnation_, " already"));
  }
  incarnation_ = update.incarnation();
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyRestore(const stoker::v1::Snapshot& snapshot) {
  if (!jobs_.empty() || !workers_.empty() || incarnation_ != 0) {
    return absl::FailedPreconditionError("restore: the state is not empty");
  }
  // Validate into a scratch state first, so that a bad snapshot leaves this one unchanged.
  ClusterState scratch;
  for (const stoker::v1::CreateJobUpdate& job : snapshot.jobs()) {
    RETURN_IF_ERROR(scratch.ApplyCreateJob(job));
  }
  for (const stoker::v1::RegisterWorkerUpdate& worker : snapshot.workers()) {
    RETURN_IF_ERROR(scratch.ApplyRegisterWorker(worker));
  }
  for (const stoker::v1::RankProgressSnapshot& rank : snapshot.ranks()) {
    auto job = scratch.jobs_.find(rank.job_id());
    if (job == scratch.jobs_.end() || rank.rank() >= job->second.record.spec.world_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("restore: bad progress of job ", rank.job_id(), " rank ", rank.rank()));
    }
    if (rank.has_resume()) {
      stoker::v1::ResumeRankUpdate resume = rank.resume();
      resume.set_job_id(rank.job_id());
      resume.set_rank(rank.rank());
      RETURN_IF_ERROR(scratch.ApplyResumeRank(resume));
    }
    RankProgress& progress = job->second.ranks[rank.rank()];
    const uint64_t total = TotalTasks(job->second.record, &progress);
    if (rank.done_watermark() > total) {
      return absl::InvalidArgumentError(
          absl::StrCat("restore: bad progress of job ", rank.job_id(), " rank ", rank.rank()));
    }
    progress.done_watermark = rank.done_watermark();
    progress.next_unleased = rank.done_watermark();
    for (uint64_t seq : rank.done_above()) {
      if (seq >= total) {
        return absl::InvalidArgumentError(
            absl::StrCat("restore: sequence ", seq, " outside job ", rank.job_id()));
      }
      scratch.MarkDone(TaskRef{rank.job_id(), rank.rank(), seq});
    }
  }
  scratch.next_job_id_ = std::max(scratch.next_job_id_, snapshot.next_job_id());
  scratch.next_worker_id_ = std::max(scratch.next_worker_id_, snapshot.next_worker_id());
  jobs_ = std::move(scratch.jobs_);
  job_ids_by_name_ = std::move(scratch.job_ids_by_name_);
  tenant_usage_ = std::move(scratch.tenant_usage_);
  workers_ = std::move(scratch.workers_);
  workers_by_heartbeat_ = std::move(scratch.workers_by_heartbeat_);
  next_job_id_ = scratch.next_job_id_;
  next_worker_id_ = scratch.next_worker_id_;
  incarnation_ = snapshot.incarnation();
  return absl::OkStatus();
}

stoker::v1::Snapshot ClusterState::MakeSnapshot() const {
  stoker::v1::Snapshot snapshot;
  for (const auto& [job_id, job] : jobs_) {
    stoker::v1::CreateJobUpdate* out = snapshot.add_jobs();
    out->set_job_id(job_id);
    out->set_name(job.record.name);
    if (job.record.tenant != kDefaultTenant) out->set_tenant(job.record.tenant);
    *out->mutable_spec() = job.record.spec;
    *out->mutable_geometry() = ToProto(job.record.geometry);
    for (const auto& [rank, progress] : job.ranks) {
      stoker::v1::RankProgressSnapshot* p = snapshot.add_ranks();
      p->set_job_id(job_id);
      p->set_rank(rank);
      p->set_done_watermark(progress.done_watermark);
      for (uint64_t seq : progress.done) p->add_done_above(seq);
      if (progress.resumed) {
        stoker::v1::ResumeRankUpdate* resume = p->mutable_resume();
        resume->set_job_id(job_id);
        resume->set_rank(rank);
        resume->set_epoch(progress.resumed->first_epoch());
        resume->mutable_batches()->Assign(progress.resumed->first_batches().begin(),
                                          progress.resumed->first_batches().end());
      }
    }
  }
  for (const auto& [worker_id, worker] : workers_) {
    stoker::v1::RegisterWorkerUpdate* out = snapshot.add_workers();
    out->set_worker_id(worker_id);
    out->set_address(worker.record.address);
    out->set_cores(worker.record.cores);
    out->set_now_unix_ms(worker.record.last_heartbeat_unix_ms);
    out->set_hybrid_client_id(worker.record.hybrid_client_id);
    out->set_pool(worker.record.pool);
  }
  snapshot.set_next_job_id(next_job_id_);
  snapshot.set_next_worker_id(next_worker_id_);
  snapshot.set_incarnation(incarnation_);
  return snapshot;
}

void ClusterState::MarkDone(const TaskRef& ref) {
  if (ref.obsolete) return;
  Job& job = jobs_[ref.job_id];
  RankProgress& progress = job.ranks[ref.rank];
  if (ref.seq < progress.done_watermark || !progress.done.insert(ref.seq).second) return;
  progress.requeued.erase(ref.seq);
  if (auto it = progress.leased.find(ref.seq); it != progress.leased.end()) {
    EraseLease(ref.job_id, ref.rank, progress, it);
  }
  while (!progress.done.empty() && *progress.done.begin() == progress.done_watermark) {
    progress.done.erase(progress.done.begin());
    ++progress.done_watermark;
  }
  progress.next_unleased = std::max(progress.next_unleased, progress.done_watermark);
}

const ClusterState::RankProgress* ClusterState::FindProgress(uint64_t job_id, uint32_t rank) const {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return nullptr;
  auto progress = job->second.ranks.find(rank);
  return progress == job->second.ranks.end() ? nullptr : &progress->second;
}

absl::StatusOr<uint32_t> ClusterState::RankOfTask(const TaskId& task) const {
  ASSIGN_OR_RETURN(TaskRef ref, Locate(task));
  return ref.rank;
}

bool ClusterState::IsDone(const TaskId& task) const {
  auto ref = Locate(task);
  if (!ref.ok()) return false;
  if (ref->obsolete) return true;
  return IsDoneAt(FindProgress(ref->job_id, ref->rank), ref->seq);
}

bool ClusterState::IsDoneAt(const RankProgress* progress, uint64_t seq) {
  if (progress == nullptr) return false;
  return seq < progress->done_watermark || progress->done.count(seq) > 0;
}

// --- Queries ---

const JobRecord* ClusterState::FindJob(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second.record;
}

TenantUsage ClusterState::UsageOf(absl::string_view tenant) const {
  auto it = tenant_usage_.find(std::string(tenant));
  return it == tenant_usage_.end() ? TenantUsage{} : it->second;
}

const JobRecord* ClusterState::FindJobByName(absl::string_view tenant,
                                             absl::string_view name) const {
  auto it = job_ids_by_name_.find(std::make_pair(std::string(tenant), std::string(name)));
  return it == job_ids_by_name_.end() ? nullptr : FindJob(it->second);
}

const WorkerRecord* ClusterState::FindWorker(uint64_t worker_id) const {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : &it->second.record;
}

const WorkerRecord* ClusterState::FindWorkerByAddress(absl::string_view address) const {
  for (const auto& [id, worker] : workers_) {
    if (worker.record.address == address) return &worker.record;
  }
  return nullptr;
}

std::vector<const JobRecord*> ClusterState::Jobs() const {
  std::vector<const JobRecord*> out;
  out.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) out.push_back(&job.record);
  return out;
}

std::vector<const WorkerRecord*> ClusterState::Workers() const {
  std::vector<const WorkerRecord*> out;
  out.reserve(workers_.size());
  for (const auto& [id, worker] : workers_) out.push_back(&worker.record);
  return out;
}

std::vector<uint64_t> ClusterState::WorkersSilentSince(int64_t cutoff_unix_ms) const {
  std::vector<uint64_t> out;
  for (auto it = workers_by_heartbeat_.begin();
       it != workers_by_heartbeat_.end() && it->first < cutoff_unix_ms; ++it) {
    out.push_back(it->second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<TaskId> ClusterState::PendingTasks(uint64_t job_id, uint32_t rank, uint64_t max) const {
  std::vector<TaskId> out;
  const JobRecord* job = FindJob(job_id);
  if (job == nullptr || rank >= job->spec.world_size()) return out;
  const RankProgress* progress = FindProgress(job_id, rank);
  const uint64_t total = TotalTasks(*job, progress);
  if (progress == nullptr) {
    for (uint64_t seq = 0; seq < total && out.size() < max; ++seq) {
      out.push_back(MakeTask(*job, rank, nullptr, seq));
    }
    return out;
  }
  for (auto it = progress->requeued.begin(); it != progress->requeued.end() && out.size() < max;
       ++it) {
    out.push_back(MakeTask(*job, rank, progress, *it));
  }
  for (uint64_t seq = FirstFresh(*progress, progress->next_unleased);
       seq < total && out.size() < max; seq = FirstFresh(*progress, seq + 1)) {
    out.push_back(MakeTask(*job, rank, progress, seq));
  }
  return out;
}

bool ClusterState::RankFinished(uint64_t job_id, uint32_t rank) const {
  const JobRecord* job = FindJob(job_id);
  const RankProgress* progress = FindProgress(job_id, rank);
  return job != nullptr && progress != nullptr &&
         progress->done_watermark == TotalTasks(*job, progress);
}

bool ClusterState::JobFinished(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return false;
  for (uint32_t rank = 0; rank < it->second.record.spec.world_size(); ++rank) {
    if (!RankFinished(job_id, rank)) return false;
  }
  return true;
}

std::vector<std::pair<uint32_t, RankProgressSummary>> ClusterState::ProgressedRankSummaries(
    uint64_t job_id) const {
  std::vector<std::pair<uint32_t, RankProgressSummary>> out;
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return out;
  for (const auto& [rank, progress] : it->second.ranks) {
    out.emplace_back(rank, RankSummary(job_id, rank));
  }
  return out;
}

RankProgressSummary ClusterState::RankSummary(uint64_t job_id, uint32_t rank) const {
  RankProgressSummary summary;
  const JobRecord* job = FindJob(job_id);
  if (job == nullptr) return summary;
  const RankProgress* progress = FindProgress(job_id, rank);
  summary.total = TotalTasks(*job, progress);
  if (progress == nullptr) return summary;
  summary.done_watermark = progress->done_watermark;
  summary.next_unleased = progress->next_unleased;
  summary.done_above_watermark = progress->done.size();
  summary.requeued = progress->requeued.size();
  summary.leased = progress->leased.size();
  return summary;
}

}  // namespace stoker
