// ClusterState: leases (lease_tasks, remove_worker, expire_leases, return_leases,
// release_leases, and retire_job, which drops a job's leases) and their indexes by expiry and by
// worker. See cluster_state.h.

#include <set>
#include <tuple>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/cluster_state.h"

namespace stoker {

using stoker::v1::TaskId;

absl::Status ClusterState::ApplyLeaseTasks(const stoker::v1::LeaseTasksUpdate& update) {
  if (workers_.count(update.worker_id()) == 0) {
    return absl::NotFoundError(absl::StrCat("worker ", update.worker_id(), " is not registered"));
  }
  // Pass 1: every task must be pending; never-leased ones must come in plan order per rank.
  std::vector<std::pair<TaskRef, bool>> refs;  // (task, was requeued)
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> cursors;
  std::set<std::tuple<uint64_t, uint32_t, uint64_t>> seen;
  for (const TaskId& task : update.tasks()) {
    ASSIGN_OR_RETURN(TaskRef ref, Locate(task));
    if (ref.obsolete) {
      return absl::FailedPreconditionError(
          absl::StrCat("lease_tasks: ", DescribeTask(task), " is done (before its rank resumed)"));
    }
    if (!seen.insert({ref.job_id, ref.rank, ref.seq}).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("lease_tasks: ", DescribeTask(task), " is listed twice"));
    }
    const RankProgress* progress = FindProgress(ref.job_id, ref.rank);
    if (progress != nullptr && progress->requeued.count(ref.seq) > 0) {
      refs.emplace_back(ref, true);
      continue;
    }
    if (progress != nullptr && progress->leased.count(ref.seq) > 0) {
      return absl::FailedPreconditionError(absl::StrCat("lease_tasks: ", DescribeTask(task),
                                                        " is leased to worker ",
                                                        progress->leased.at(ref.seq).worker_id));
    }
    if (IsDoneAt(progress, ref.seq)) {
      return absl::FailedPreconditionError(
          absl::StrCat("lease_tasks: ", DescribeTask(task), " is done"));
    }
    auto [cursor, inserted] = cursors.try_emplace({ref.job_id, ref.rank}, 0);
    if (inserted && progress != nullptr) {
      cursor->second = FirstFresh(*progress, progress->next_unleased);
    }
    if (ref.seq != cursor->second) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lease_tasks: ", DescribeTask(task), " is not the next pending task of rank ", ref.rank));
    }
    cursor->second = progress != nullptr ? FirstFresh(*progress, ref.seq + 1) : ref.seq + 1;
    refs.emplace_back(ref, false);
  }
  // Pass 2: apply.
  for (const auto& [ref, requeued] : refs) {
    RankProgress& progress = jobs_[ref.job_id].ranks[ref.rank];
    if (requeued) {
      progress.requeued.erase(ref.seq);
    } else {
      progress.next_unleased = ref.seq + 1;
    }
    AddLease(ref.job_id, ref.rank, progress, ref.seq,
             Lease{update.worker_id(), update.expires_unix_ms()});
  }
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyRemoveWorker(const stoker::v1::RemoveWorkerUpdate& update) {
  auto worker = workers_.find(update.worker_id());
  if (worker == workers_.end()) {
    return absl::NotFoundError(absl::StrCat("worker ", update.worker_id(), " is not registered"));
  }
  // A copy: RequeueLease edits the index.
  for (const auto& [job_id, rank, seq] : lease_index_.HeldBy(update.worker_id())) {
    Job& job = jobs_.at(job_id);
    RankProgress& progress = job.ranks.at(rank);
    RequeueLease(job.record, rank, progress, progress.leased.find(seq), /*revoke=*/false);
  }
  workers_by_heartbeat_.erase({worker->second.record.last_heartbeat_unix_ms, worker->first});
  workers_.erase(worker);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyExpireLeases(const stoker::v1::ExpireLeasesUpdate& update) {
  while (const std::optional<LeaseKey> expired =
             lease_index_.FirstExpiredBy(update.now_unix_ms())) {
    const auto [job_id, rank, seq] = *expired;
    Job& job = jobs_.at(job_id);
    RankProgress& progress = job.ranks.at(rank);
    RequeueLease(job.record, rank, progress, progress.leased.find(seq), /*revoke=*/true);
  }
  return absl::OkStatus();
}

absl::Status ClusterState::ForEachLeaseOf(
    uint64_t worker_id, const google::protobuf::RepeatedPtrField<TaskId>& tasks,
    absl::FunctionRef<void(Job&, uint32_t, RankProgress&, std::map<uint64_t, Lease>::iterator)>
        fn) {
  std::vector<TaskRef> refs;
  for (const TaskId& task : tasks) {
    ASSIGN_OR_RETURN(TaskRef ref, Locate(task));
    refs.push_back(ref);
  }
  for (const TaskRef& ref : refs) {
    if (ref.obsolete || worker_id == kReleased) continue;
    Job& job = jobs_.at(ref.job_id);
    auto progress = job.ranks.find(ref.rank);
    if (progress == job.ranks.end()) continue;
    auto lease = progress->second.leased.find(ref.seq);
    if (lease == progress->second.leased.end() || lease->second.worker_id != worker_id) continue;
    fn(job, ref.rank, progress->second, lease);
  }
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyReturnLeases(const stoker::v1::ReturnLeasesUpdate& update) {
  return ForEachLeaseOf(update.worker_id(), update.tasks(),
                        [this](Job& job, uint32_t rank, RankProgress& progress, auto lease) {
                          RequeueLease(job.record, rank, progress, lease, /*revoke=*/false);
                        });
}

absl::Status ClusterState::ApplyReleaseLeases(const stoker::v1::ReleaseLeasesUpdate& update) {
  return ForEachLeaseOf(
      update.worker_id(), update.tasks(),
      [this](Job& job, uint32_t rank, RankProgress&, auto lease) {
        lease_index_.Release({job.record.id, rank, lease->first}, lease->second.worker_id);
        lease->second.worker_id = kReleased;
      });
}

absl::Status ClusterState::ApplyRetireJob(const stoker::v1::RetireJobUpdate& update) {
  auto job = jobs_.find(update.job_id());
  if (job == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("retire_job: job ", update.job_id(), ": no such job"));
  }
  for (auto& [rank, progress] : job->second.ranks) {
    while (!progress.leased.empty()) {
      EraseLease(update.job_id(), rank, progress, progress.leased.begin());
    }
  }
  const JobRecord& record = job->second.record;
  job_ids_by_name_.erase(std::make_pair(record.tenant, record.name));
  auto usage = tenant_usage_.find(record.tenant);
  if (--usage->second.jobs == 0) {
    tenant_usage_.erase(usage);
  } else {
    usage->second.ranks -= record.spec.world_size();
  }
  jobs_.erase(job);
  return absl::OkStatus();
}

void ClusterState::RequeueLease(const JobRecord& job, uint32_t rank, RankProgress& progress,
                                std::map<uint64_t, Lease>::iterator it, bool revoke) {
  if (revoke) {
    auto worker = workers_.find(it->second.worker_id);
    if (worker != workers_.end()) {
      std::deque<TaskId>& revoked = worker->second.revoked;
      revoked.push_back(MakeTask(job, rank, &progress, it->first));
      if (revoked.size() > kMaxRevokedPerWorker) revoked.pop_front();
    }
  }
  ++leases_requeued_;
  progress.requeued.insert(it->first);
  EraseLease(job.id, rank, progress, it);
}

void ClusterState::AddLease(uint64_t job_id, uint32_t rank, RankProgress& progress, uint64_t seq,
                            const Lease& lease) {
  progress.leased[seq] = lease;
  lease_index_.Add({job_id, rank, seq}, lease.expires_unix_ms, lease.worker_id);
}

void ClusterState::EraseLease(uint64_t job_id, uint32_t rank, RankProgress& progress,
                              std::map<uint64_t, Lease>::iterator it) {
  lease_index_.Remove({job_id, rank, it->first}, it->second.expires_unix_ms, it->second.worker_id);
  progress.leased.erase(it);
}

std::optional<uint64_t> ClusterState::LeaseHolder(const TaskId& task) const {
  auto ref = Locate(task);
  if (!ref.ok()) return std::nullopt;
  const RankProgress* progress = FindProgress(ref->job_id, ref->rank);
  if (progress == nullptr) return std::nullopt;
  auto it = progress->leased.find(ref->seq);
  if (it == progress->leased.end()) return std::nullopt;
  return it->second.worker_id;
}

std::optional<int64_t> ClusterState::EarliestLeaseExpiry() const {
  return lease_index_.EarliestExpiry();
}

std::vector<TaskId> ClusterState::LeasesOf(uint64_t worker_id) const {
  std::vector<TaskId> out;
  for (const auto& [job_id, rank, seq] : lease_index_.HeldBy(worker_id)) {
    const Job& job = jobs_.at(job_id);
    out.push_back(MakeTask(job.record, rank, &job.ranks.at(rank), seq));
  }
  return out;
}

std::vector<TaskId> ClusterState::RevokedLeases(uint64_t worker_id) const {
  std::vector<TaskId> out;
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return out;
  for (const TaskId& task : it->second.revoked) {
    auto ref = Locate(task);
    if (!ref.ok()) continue;
    if (ref->obsolete) {  // its rank resumed since: the worker must drop it
      out.push_back(task);
      continue;
    }
    if (IsDone(task)) continue;
    const RankProgress* progress = FindProgress(ref->job_id, ref->rank);
    auto lease = progress->leased.find(ref->seq);
    // Leased to this worker again since: it holds the task after all.
    if (lease != progress->leased.end() && lease->second.worker_id == worker_id) continue;
    out.push_back(task);
  }
  return out;
}

}  // namespace stoker
