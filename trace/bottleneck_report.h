#ifndef STOKER_TRACE_BOTTLENECK_REPORT_H_
#define STOKER_TRACE_BOTTLENECK_REPORT_H_

// Names a rank's bottleneck from its footprint (issue 26, item 3; `stoker-ctl report`), as the
// profiling guides do for one machine: low GPU use with the link at its maximum is the network;
// with the workers' CPUs busy, the workers; and so on, with a recommendation for each.
//
// The rules, in order (thresholds in BottleneckThresholds, the one place they are defined):
//
//   0. gpu_utilization known (NVML) and >= gpu_busy (90%)      -> none (the GPU is the limit;
//      with asynchronous CUDA work the host thread blocks in Next()'s device copy while the
//      GPU drains its queue, so that wait reads as data wait)
//   1. data_wait_share < data_wait_share threshold (10%)      -> none (the GPU step dominates)
//   2. link_utilization >= link_near_capacity (80%)           -> network
//   3. no late batch traced (critical-path seconds all 0)     -> none, saying so
//   4. the stage group with the largest share of late batches' critical path, ties going
//      upstream (storage, workers, network, trainer):
//        storage  (shard_read, cache_fetch)                   -> storage
//        workers  (decode, op, op_group, tail, encode, compress) -> workers (add N, the advisor's)
//        trainer  (receive, decompress, handoff, h2d)         -> trainer
//        network  (queue, send)                               -> network, unless the link is
//          known to be below capacity and the trainer's receive/H2D threads are busy at least
//          trainer_busy (80%) of the time: the receiver is what holds the sender back -> trainer
//
// The GPU's utilization (NVML, where the trainer has it) is shown beside the verdict.
//
// Stages outside the groups (lease_wait, buffer_wait, consumer_step, coordinator events) do not
// count: a late batch's wait for a lease or the consumer's step is not the data path's time.
//
// Pure functions; thread-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "trace/span.h"

namespace stoker::trace {

enum class Verdict { kNone, kWorkers, kStorage, kNetwork, kTrainer };
// "none", "workers", "storage", "network", "trainer".
absl::string_view VerdictName(Verdict verdict);

// The data path's stage groups, upstream first (the tie order of rule 4).
enum class StageGroup { kStorage, kWorkers, kNetwork, kTrainer };
inline constexpr int kStageGroupCount = 4;
absl::string_view StageGroupName(StageGroup group);
// The group of a data-path stage; nullopt for the stages that do not count.
std::optional<StageGroup> GroupOf(Stage stage);

struct BottleneckThresholds {
  // Rule 1: below this share of the consumer's time waiting for data, the input keeps up.
  double data_wait_share = 0.10;
  // Rule 2: at or above this share of the link's capacity, the link is the bottleneck.
  double link_near_capacity = 0.80;
  // Rule 4: at or above this share of the trainer host's time busy receiving, decompressing
  // and copying to the device, a wire-dominated path is the trainer's receive path.
  double trainer_busy = 0.80;
  // Rule 0: at or above this share of the time busy (NVML), the GPU is the limit.
  double gpu_busy = 0.90;
};

// What a rank's report is computed from: aggregates over the traced window.
struct RankFootprint {
  uint32_t rank = 0;
  // Shares of the consumer's wall time: waiting in Next() for data, and in its step. [0, 1].
  double data_wait_share = 0;
  double gpu_step_share = 0;
  // Seconds of late batches' (those the consumer waited for) critical path, by StageIndex.
  std::array<double, kStageCount> late_stage_seconds{};
  // The job's workers: busy core-seconds over available core-seconds. [0, 1].
  double worker_cpu_utilization = 0;
  // The rank's received bytes per second over its link's capacity; < 0 when the capacity is
  // unknown. >= 0 otherwise (may exceed 1 when the capacity is underestimated).
  double link_utilization = -1;
  // Share of the trainer host's wall time its receive, decompress and H2D threads were busy.
  double trainer_receive_share = 0;
  // Utilization of the GPU the rank feeds (ClientStats.gpu_utilization), [0, 1]; nullopt when
  // unknown (no NVML on the trainer, a CPU device, a client that predates it).
  std::optional<double> gpu_utilization;
  // Workers serving the job now, and the advisor's suggested count.
  uint32_t workers = 0;
  uint32_t advisor_workers = 0;
};

struct RankVerdict {
  RankFootprint footprint;
  Verdict verdict = Verdict::kNone;
  // Each group's share of the late batches' critical path (0 when none was traced).
  std::array<double, kStageGroupCount> group_shares{};
  std::string recommendation;
};

// INVALID_ARGUMENT naming the field when a share (or a known gpu_utilization) is outside [0, 1],
// a second count is negative
// or any figure is not finite.
absl::StatusOr<RankVerdict> Diagnose(const RankFootprint& footprint,
                                     const BottleneckThresholds& thresholds = {});

// One paragraph per rank: verdict, footprint, recommendation.
std::string RenderReportText(absl::Span<const RankVerdict> ranks);
// {"ranks":[{"rank":0,"verdict":"workers",...,"recommendation":"..."}]}
std::string RenderReportJson(absl::Span<const RankVerdict> ranks);

}  // namespace stoker::trace

#endif  // STOKER_TRACE_BOTTLENECK_REPORT_H_
