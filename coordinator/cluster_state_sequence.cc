// ClusterState: where a task sits in its rank's sequence (plain or resumed), and resume_rank.
// See cluster_state.h for the sequences.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "coordinator/cluster_state.h"
#include "data/epoch_plan.h"

namespace stoker {

using stoker::v1::TaskId;

absl::Status ClusterState::ApplyResumeRank(const stoker::v1::ResumeRankUpdate& update) {
  auto job_it = jobs_.find(update.job_id());
  if (job_it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("resume_rank: job ", update.job_id(), ": no such job"));
  }
  Job& job = job_it->second;
  const stoker::v1::JobSpec& spec = job.record.spec;
  if (update.rank() >= spec.world_size()) {
    return absl::InvalidArgumentError(absl::StrCat("resume_rank.rank: ", update.rank(),
                                                   " is outside world size ", spec.world_size()));
  }
  if (update.epoch() > spec.epochs() ||
      (update.epoch() == spec.epochs() && update.batches_size() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("resume_rank.epoch: ", update.epoch(),
                                                   " is outside the job's ", spec.epochs(),
                                                   " epochs (or has batches after the last)"));
  }
  const uint64_t limit =
      BatchIndexLimit(job.record.geometry.batches_per_rank * spec.world_size(), spec.world_size());
  Resumed resumed;
  resumed.epoch = update.epoch();
  resumed.batches.assign(update.batches().begin(), update.batches().end());
  for (uint64_t i = 0; i < resumed.batches.size(); ++i) {
    const uint64_t g = resumed.batches[i];
    if (g >= limit || !resumed.index.emplace(g, i).second) {
      return absl::InvalidArgumentError(absl::StrCat("resume_rank.batches[", i, "]: batch ", g,
                                                     " is listed twice or past the limit ", limit));
    }
  }
  // Revoke the rank's leases: their workers learn it in drop_leases.
  RankProgress& progress = job.ranks[update.rank()];
  for (auto it = progress.leased.begin(); it != progress.leased.end();) {
    auto next = std::next(it);
    RequeueLease(job.record, update.rank(), progress, it, /*revoke=*/true);
    it = next;
  }
  progress = RankProgress();
  progress.resumed = std::move(resumed);
  return absl::OkStatus();
}

absl::StatusOr<ClusterState::TaskRef> ClusterState::Locate(const TaskId& task) const {
  auto job_it = jobs_.find(task.job_id());
  if (job_it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat(DescribeTask(task), ": no such job"));
  }
  const Job& job = job_it->second;
  const uint32_t world_size = job.record.spec.world_size();
  const uint64_t per_rank = job.record.geometry.batches_per_rank;
  const uint64_t g = task.batch_index();
  if (task.epoch() >= job.record.spec.epochs()) {
    return absl::InvalidArgumentError(
        absl::StrCat(DescribeTask(task), ": the job has ", job.record.spec.epochs(), " epochs"));
  }
  TaskRef ref;
  ref.job_id = task.job_id();
  // A resumed rank's list of its resume epoch holds any batch of that epoch (pads included).
  bool resumed_at_or_after = false;
  for (const auto& [rank, progress] : job.ranks) {
    if (!progress.resumed || progress.resumed->epoch < task.epoch()) continue;
    resumed_at_or_after = true;
    if (progress.resumed->epoch != task.epoch()) continue;
    auto it = progress.resumed->index.find(g);
    if (it != progress.resumed->index.end()) {
      ref.rank = rank;
      ref.seq = it->second;
      return ref;
    }
  }
  const uint64_t global = per_rank * world_size;
  ref.rank = static_cast<uint32_t>(g % world_size);
  if (g >= global) {
    // A pad batch of a resumed epoch that no rank's list holds any more.
    if (resumed_at_or_after && g < BatchIndexLimit(global, world_size)) {
      ref.obsolete = true;
      return ref;
    }
    return absl::InvalidArgumentError(
        absl::StrCat(DescribeTask(task), ": an epoch has ", global, " batches"));
  }
  const RankProgress* progress = FindProgress(task.job_id(), ref.rank);
  if (progress != nullptr && progress->resumed) {
    const Resumed& resumed = *progress->resumed;
    if (task.epoch() <= resumed.epoch) {
      ref.obsolete = true;
      return ref;
    }
    ref.seq = resumed.batches.size() + uint64_t{task.epoch() - resumed.epoch - 1} * per_rank +
              g / world_size;
    return ref;
  }
  ref.seq = uint64_t{task.epoch()} * per_rank + g / world_size;
  return ref;
}

TaskId ClusterState::MakeTask(const JobRecord& job, uint32_t rank, const RankProgress* progress,
                              uint64_t seq) {
  const uint64_t per_rank = job.geometry.batches_per_rank;
  TaskId task;
  task.set_job_id(job.id);
  uint32_t first_epoch = 0;
  if (progress != nullptr && progress->resumed) {
    const Resumed& resumed = *progress->resumed;
    if (seq < resumed.batches.size()) {
      task.set_epoch(resumed.epoch);
      task.set_batch_index(resumed.batches[seq]);
      return task;
    }
    seq -= resumed.batches.size();
    first_epoch = resumed.epoch + 1;
  }
  task.set_epoch(first_epoch + static_cast<uint32_t>(seq / per_rank));
  task.set_batch_index((seq % per_rank) * job.spec.world_size() + rank);
  return task;
}

uint64_t ClusterState::TotalTasks(const JobRecord& job, const RankProgress* progress) {
  const uint64_t per_rank = job.geometry.batches_per_rank;
  if (progress == nullptr || !progress->resumed) return per_rank * job.spec.epochs();
  const Resumed& resumed = *progress->resumed;
  if (resumed.epoch >= job.spec.epochs()) return 0;
  return resumed.batches.size() + per_rank * (job.spec.epochs() - resumed.epoch - 1);
}

uint64_t ClusterState::FirstFresh(const RankProgress& progress, uint64_t from) {
  uint64_t seq = std::max(from, progress.done_watermark);
  for (auto it = progress.done.lower_bound(seq); it != progress.done.end() && *it == seq; ++it) {
    ++seq;
  }
  return seq;
}

}  // namespace stoker
