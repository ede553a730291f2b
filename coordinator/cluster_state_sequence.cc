// ClusterState: where a task sits in its rank's sequence (plain or resumed), and resume_rank.
// See cluster_state.h for the sequences.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/cluster_state.h"
#include "plan/epoch_plan.h"
#include "plan/rank_sequence.h"

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
  RankSequence resumed = RankSequence::Resumed(
      update.rank(), spec.world_size(), job.record.geometry.batches_per_rank, spec.epochs(),
      update.epoch(), {update.batches().begin(), update.batches().end()});
  RETURN_IF_ERROR(resumed.CheckResumed("resume_rank.batches"));
  // Revoke the rank's leases: their workers learn it in drop_leases.
  RankProgress& progress = job.ranks[update.rank()];
  for (auto it = progress.leased.begin(); it != progress.leased.end();) {
    auto next = std::next(it);
    RequeueLease(job.record, update.rank(), progress, it, /*revoke=*/true);
    it = next;
  }
  progress = RankProgress();
  progress.resumed = std::move(resumed);
  job.resumed_ranks.insert(update.rank());
  return absl::OkStatus();
}

RankSequence ClusterState::SequenceOf(const JobRecord& job, uint32_t rank,
                                      const RankProgress* progress) {
  if (progress != nullptr && progress->resumed) return *progress->resumed;
  return RankSequence(rank, job.spec.world_size(), job.geometry.batches_per_rank,
                      job.spec.epochs());
}

absl::StatusOr<ClusterState::TaskRef> ClusterState::Locate(const TaskId& task) const {
  auto job_it = jobs_.find(task.job_id());
  if (job_it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat(DescribeTask(task), ": no such job"));
  }
  const Job& job = job_it->second;
  const uint32_t world_size = job.record.spec.world_size();
  const uint64_t g = task.batch_index();
  if (task.epoch() >= job.record.spec.epochs()) {
    return absl::InvalidArgumentError(
        absl::StrCat(DescribeTask(task), ": the job has ", job.record.spec.epochs(), " epochs"));
  }
  TaskRef ref;
  ref.job_id = task.job_id();
  // A resumed rank's list of its resume epoch holds any batch of that epoch (pads included).
  bool resumed_at_or_after = false;
  for (uint32_t rank : job.resumed_ranks) {
    const RankProgress& progress = job.ranks.at(rank);
    if (progress.resumed->first_epoch() < task.epoch()) continue;
    resumed_at_or_after = true;
    if (std::optional<uint64_t> seq = progress.resumed->SeqOf(task.epoch(), g)) {
      ref.rank = rank;
      ref.seq = *seq;
      return ref;
    }
  }
  const uint64_t global = job.record.geometry.batches_per_rank * world_size;
  ref.rank = RankOfBatch(g, world_size);
  if (g >= global) {
    // A pad batch of a resumed epoch that no rank's list holds any more.
    if (resumed_at_or_after && g < BatchIndexLimit(global, world_size)) {
      ref.obsolete = true;
      return ref;
    }
    return absl::InvalidArgumentError(
        absl::StrCat(DescribeTask(task), ": an epoch has ", global, " batches"));
  }
  // Outside the rank's sequence: of its past, before (or in) the epoch it resumed at.
  const std::optional<uint64_t> seq =
      SequenceOf(job.record, ref.rank, FindProgress(task.job_id(), ref.rank))
          .SeqOf(task.epoch(), g);
  if (!seq.has_value()) {
    ref.obsolete = true;
    return ref;
  }
  ref.seq = *seq;
  return ref;
}

TaskId ClusterState::MakeTask(const JobRecord& job, uint32_t rank, const RankProgress* progress,
                              uint64_t seq) {
  const RankSequence::Task at = SequenceOf(job, rank, progress).TaskAt(seq);
  TaskId task;
  task.set_job_id(job.id);
  task.set_epoch(at.epoch);
  task.set_batch_index(at.batch_index);
  return task;
}

uint64_t ClusterState::TotalTasks(const JobRecord& job, const RankProgress* progress) {
  return SequenceOf(job, /*rank=*/0, progress).size();  // the same for every rank
}

uint64_t ClusterState::FirstFresh(const RankProgress& progress, uint64_t from) {
  uint64_t seq = std::max(from, progress.done_watermark);
  for (auto it = progress.done.lower_bound(seq); it != progress.done.end() && *it == seq; ++it) {
    ++seq;
  }
  return seq;
}

}  // namespace stoker
