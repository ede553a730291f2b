#include "trace/bottleneck_report.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "common/status_macros.h"

namespace stoker::trace {
namespace {

constexpr StageGroup kGroups[] = {StageGroup::kStorage, StageGroup::kWorkers, StageGroup::kNetwork,
                                  StageGroup::kTrainer};

absl::Status CheckShare(absl::string_view field, double value) {
  if (!std::isfinite(value) || value < 0 || value > 1) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is not in [0, 1]"));
  }
  return absl::OkStatus();
}

absl::Status CheckFootprint(const RankFootprint& footprint) {
  for (const auto& [field, value] :
       {std::pair<absl::string_view, double>{"data_wait_share", footprint.data_wait_share},
        {"gpu_step_share", footprint.gpu_step_share},
        {"worker_cpu_utilization", footprint.worker_cpu_utilization},
        {"trainer_receive_share", footprint.trainer_receive_share}}) {
    const absl::Status status = CheckShare(field, value);
    if (!status.ok()) return status;
  }
  if (footprint.gpu_utilization.has_value()) {
    RETURN_IF_ERROR(CheckShare("gpu_utilization", *footprint.gpu_utilization));
  }
  if (!std::isfinite(footprint.link_utilization)) {
    return absl::InvalidArgumentError("link_utilization: not a finite number");
  }
  for (Stage stage : kAllStages) {
    const double seconds = footprint.late_stage_seconds[StageIndex(stage)];
    if (!std::isfinite(seconds) || seconds < 0) {
      return absl::InvalidArgumentError(absl::StrCat("late_stage_seconds[", StageName(stage),
                                                     "]: ", seconds, " is not a duration"));
    }
  }
  return absl::OkStatus();
}

std::array<double, kStageGroupCount> GroupShares(const RankFootprint& footprint) {
  std::array<double, kStageGroupCount> shares{};
  double total = 0;
  for (Stage stage : kAllStages) {
    const std::optional<StageGroup> group = GroupOf(stage);
    if (!group.has_value()) continue;
    const double seconds = footprint.late_stage_seconds[StageIndex(stage)];
    shares[static_cast<int>(*group)] += seconds;
    total += seconds;
  }
  if (total > 0) {
    for (double& share : shares) share /= total;
  }
  return shares;
}

std::string Percent(double share) { return absl::StrFormat("%.1f%%", share * 100); }

std::string GpuUtilizationText(const std::optional<double>& utilization) {
  return utilization.has_value() ? absl::StrCat("GPU utilization ", Percent(*utilization))
                                 : "GPU utilization unknown";
}

// Rule 0: NVML says the GPU is busy at least gpu_busy of the time.
bool GpuIsTheLimit(const RankFootprint& footprint, const BottleneckThresholds& thresholds) {
  return footprint.gpu_utilization.has_value() && *footprint.gpu_utilization >= thresholds.gpu_busy;
}

// Why a verdict is none: rule 0 (the GPU is busy), rule 1 (the step dominates) or rule 3.
enum class NoneBecause { kGpuBusy, kStepDominates, kNothingLate };

std::string Recommendation(Verdict verdict, const RankFootprint& footprint, NoneBecause because) {
  switch (verdict) {
    case Verdict::kNone:
      if (because == NoneBecause::kNothingLate) {
        return "no late batch was traced: trace longer or sample more batches";
      }
      if (because == NoneBecause::kGpuBusy) {
        return absl::StrCat("NVML: the GPU is busy ", Percent(*footprint.gpu_utilization),
                            " of the time, so the input keeps up; the time in Next() is the "
                            "device's queue draining (asynchronous CUDA work): nothing to change");
      }
      return absl::StrCat("the GPU step takes ", Percent(footprint.gpu_step_share),
                          " of the time and the input keeps up: nothing to change",
                          footprint.gpu_utilization.has_value()
                              ? absl::StrCat(" (NVML: the GPU is busy ",
                                             Percent(*footprint.gpu_utilization), " of the time)")
                              : "");
    case Verdict::kWorkers: {
      const uint32_t add = std::max<uint32_t>(footprint.advisor_workers > footprint.workers
                                                  ? footprint.advisor_workers - footprint.workers
                                                  : 0,
                                              1);
      return absl::StrCat("decode and ops make batches late: add ", add, " worker(s) (",
                          footprint.workers, " now, the advisor suggests ",
                          footprint.advisor_workers,
                          "), or make the pipeline cheaper (fused decode and crop, fewer blurs)");
    }
    case Verdict::kStorage:
      return "reads make batches late: enable the workers' cache, pack small files into shards "
             "(stoker-pack), shuffle shard-aware (shuffle_window_shards)";
    case Verdict::kNetwork:
      return "the link makes batches late: ship uint8 or float16 (tail on the trainer), turn on "
             "compression (lz4, zstd)";
    case Verdict::kTrainer:
      return "the trainer host's receive, decompress or H2D copy makes batches late: send fewer "
             "bytes (uint8, tail on the trainer), use pinned memory, raise prefetch";
  }
  return "";
}

Verdict VerdictOf(const RankFootprint& footprint,
                  const std::array<double, kStageGroupCount>& shares,
                  const BottleneckThresholds& thresholds) {
  if (GpuIsTheLimit(footprint, thresholds)) return Verdict::kNone;
  if (footprint.data_wait_share < thresholds.data_wait_share) return Verdict::kNone;
  if (footprint.link_utilization >= thresholds.link_near_capacity) return Verdict::kNetwork;
  // max_element returns the first of equal maxima: ties go upstream (kGroups' order).
  const auto dominant = std::max_element(shares.begin(), shares.end());
  if (*dominant == 0) return Verdict::kNone;
  switch (kGroups[dominant - shares.begin()]) {
    case StageGroup::kStorage:
      return Verdict::kStorage;
    case StageGroup::kWorkers:
      return Verdict::kWorkers;
    case StageGroup::kTrainer:
      return Verdict::kTrainer;
    case StageGroup::kNetwork:
      break;
  }
  const bool link_below_capacity = footprint.link_utilization >= 0;
  return link_below_capacity && footprint.trainer_receive_share >= thresholds.trainer_busy
             ? Verdict::kTrainer
             : Verdict::kNetwork;
}

}  // namespace

absl::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNone:
      return "none";
    case Verdict::kWorkers:
      return "workers";
    case Verdict::kStorage:
      return "storage";
    case Verdict::kNetwork:
      return "network";
    case Verdict::kTrainer:
      return "trainer";
  }
  return "none";
}

absl::string_view StageGroupName(StageGroup group) {
  switch (group) {
    case StageGroup::kStorage:
      return "storage";
    case StageGroup::kWorkers:
      return "workers";
    case StageGroup::kNetwork:
      return "network";
    case StageGroup::kTrainer:
      return "trainer";
  }
  return "";
}

std::optional<StageGroup> GroupOf(Stage stage) {
  switch (stage) {
    case Stage::kShardRead:
    case Stage::kCacheFetch:
      return StageGroup::kStorage;
    case Stage::kDecode:
    case Stage::kDecodedCacheHit:
    case Stage::kOp:
    case Stage::kOpGroup:
    case Stage::kTail:
    case Stage::kEncode:
    case Stage::kCompress:
      return StageGroup::kWorkers;
    case Stage::kQueue:
    case Stage::kSend:
      return StageGroup::kNetwork;
    case Stage::kReceive:
    case Stage::kDecompress:
    case Stage::kHandoff:
    case Stage::kH2D:
      return StageGroup::kTrainer;
    default:
      return std::nullopt;
  }
}

absl::StatusOr<RankVerdict> Diagnose(const RankFootprint& footprint,
                                     const BottleneckThresholds& thresholds) {
  const absl::Status valid = CheckFootprint(footprint);
  if (!valid.ok()) return valid;
  RankVerdict verdict;
  verdict.footprint = footprint;
  verdict.group_shares = GroupShares(footprint);
  verdict.verdict = VerdictOf(footprint, verdict.group_shares, thresholds);
  const NoneBecause because = GpuIsTheLimit(footprint, thresholds) ? NoneBecause::kGpuBusy
                              : footprint.data_wait_share < thresholds.data_wait_share
                                  ? NoneBecause::kStepDominates
                                  : NoneBecause::kNothingLate;
  verdict.recommendation = Recommendation(verdict.verdict, footprint, because);
  return verdict;
}

std::string RenderReportText(absl::Span<const RankVerdict> ranks) {
  std::string text;
  for (const RankVerdict& rank : ranks) {
    const RankFootprint& f = rank.footprint;
    std::vector<std::string> groups;
    for (StageGroup group : kGroups) {
      groups.push_back(absl::StrCat(StageGroupName(group), " ",
                                    Percent(rank.group_shares[static_cast<int>(group)])));
    }
    const std::string link =
        f.link_utilization < 0 ? "link capacity unknown"
                               : absl::StrCat("link ", Percent(f.link_utilization), " of capacity");
    absl::StrAppend(&text, "rank ", f.rank, ": ", VerdictName(rank.verdict), "\n", "  data wait ",
                    Percent(f.data_wait_share), ", GPU step ", Percent(f.gpu_step_share), ", ",
                    GpuUtilizationText(f.gpu_utilization), "\n",
                    "  late batches' critical path: ", absl::StrJoin(groups, ", "), "\n",
                    "  workers' CPU ", Percent(f.worker_cpu_utilization), ", ", link,
                    ", trainer receive/H2D busy ", Percent(f.trainer_receive_share), "\n",
                    "  recommendation: ", rank.recommendation, "\n");
  }
  return text;
}

std::string RenderReportJson(absl::Span<const RankVerdict> ranks) {
  std::vector<std::string> entries;
  for (const RankVerdict& rank : ranks) {
    const RankFootprint& f = rank.footprint;
    std::vector<std::string> groups;
    for (StageGroup group : kGroups) {
      groups.push_back(absl::StrFormat("%s:%.6g", JsonQuoted(StageGroupName(group)),
                                       rank.group_shares[static_cast<int>(group)]));
    }
    std::vector<std::string> stages;
    for (Stage stage : kAllStages) {
      const double seconds = f.late_stage_seconds[StageIndex(stage)];
      if (seconds > 0)
        stages.push_back(absl::StrFormat("%s:%.6g", JsonQuoted(StageName(stage)), seconds));
    }
    const std::string link =
        f.link_utilization < 0 ? "null" : absl::StrFormat("%.6g", f.link_utilization);
    const std::string gpu =
        f.gpu_utilization.has_value() ? absl::StrFormat("%.6g", *f.gpu_utilization) : "null";
    entries.push_back(absl::StrFormat(
        "{\"rank\":%d,\"verdict\":%s,\"gpu_utilization\":%s,\"data_wait_share\":%.6g,"
        "\"gpu_step_share\":%.6g,"
        "\"late_path_shares\":{%s},\"late_stage_seconds\":{%s},\"worker_cpu_utilization\":%.6g,"
        "\"link_utilization\":%s,\"trainer_receive_share\":%.6g,\"workers\":%d,"
        "\"advisor_workers\":%d,\"recommendation\":%s}",
        f.rank, JsonQuoted(VerdictName(rank.verdict)), gpu, f.data_wait_share, f.gpu_step_share,
        absl::StrJoin(groups, ","), absl::StrJoin(stages, ","), f.worker_cpu_utilization, link,
        f.trainer_receive_share, f.workers, f.advisor_workers, JsonQuoted(rank.recommendation)));
  }
  return absl::StrCat("{\"ranks\":[", absl::StrJoin(entries, ","), "]}\n");
}

}  // namespace stoker::trace
