#include "tools/report_assembly.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/ids.h"

namespace stoker {
namespace {

constexpr absl::string_view kRankPrefix = "rank ";

// The job's workers: those that produced for it in their last window.
bool ServesJob(const stoker::v1::WorkerStatus& worker, uint64_t job_id) {
  return std::any_of(worker.job_rates().begin(), worker.job_rates().end(),
                     [&](const stoker::v1::JobRate& rate) {
                       return rate.job_id() == job_id && rate.samples_per_second() > 0;
                     });
}

double WorkerCpuUtilization(const stoker::v1::GetStatusResponse& status, uint64_t job_id) {
  double busy = 0;
  int workers = 0;
  for (const stoker::v1::WorkerStatus& worker : status.workers()) {
    if (!ServesJob(worker, job_id)) continue;
    busy += std::clamp(worker.busy_fraction(), 0.0, 1.0);
    ++workers;
  }
  return workers == 0 ? 0 : busy / workers;
}

const stoker::v1::RankStatus* FindRank(const stoker::v1::JobStatus& job, uint32_t rank) {
  for (const stoker::v1::RankStatus& each : job.ranks()) {
    if (each.rank() == rank) return &each;
  }
  return nullptr;
}

// The ranks of the job: those that reported and the "rank N" processes of the timeline.
std::set<uint32_t> RanksOf(const stoker::v1::JobStatus& job,
                           absl::Span<const trace::TraceProcess> timeline) {
  std::set<uint32_t> ranks;
  for (const stoker::v1::RankStatus& rank : job.ranks()) ranks.insert(rank.rank());
  for (const trace::TraceProcess& process : timeline) {
    absl::string_view name = process.name;
    uint32_t rank = 0;
    if (absl::ConsumePrefix(&name, kRankPrefix) && absl::SimpleAtoi(name, &rank)) {
      ranks.insert(rank);
    }
  }
  return ranks;
}

// The span part of rank `rank`'s footprint over `metrics`; without a traced handoff, the
// reported data wait fraction and no late path.
absl::StatusOr<trace::RankFootprint> RankFootprintOf(trace::RankFootprint metrics,
                                                     const stoker::v1::JobStatus& job,
                                                     absl::Span<const trace::TraceProcess> timeline,
                                                     uint32_t rank, const ReportOptions& options) {
  absl::StatusOr<trace::RankFootprint> spans = trace::FootprintFromTimeline(
      timeline, absl::StrCat(kRankPrefix, rank), rank, options.footprint);
  if (spans.ok()) {
    metrics.data_wait_share = spans->data_wait_share;
    metrics.gpu_step_share = spans->gpu_step_share;
    metrics.late_stage_seconds = spans->late_stage_seconds;
    return metrics;
  }
  const absl::StatusCode code = spans.status().code();
  if (code != absl::StatusCode::kNotFound && code != absl::StatusCode::kFailedPrecondition) {
    return spans.status();
  }
  if (const stoker::v1::RankStatus* reported = FindRank(job, rank); reported != nullptr) {
    metrics.data_wait_share = std::clamp(reported->stats().data_wait_fraction(), 0.0, 1.0);
    metrics.gpu_step_share = 1 - metrics.data_wait_share;
  }
  return metrics;
}

}  // namespace

absl::StatusOr<const stoker::v1::JobStatus*> FindJob(const stoker::v1::GetStatusResponse& status,
                                                     absl::string_view job) {
  uint64_t id = 0;
  const bool numeric = absl::SimpleAtoi(job, &id);
  for (const stoker::v1::JobStatus& each : status.jobs()) {
    if (each.name() == job) return &each;
  }
  for (const stoker::v1::JobStatus& each : status.jobs()) {
    if (numeric && (each.job_id() == id || SerialOf(each.job_id()) == id)) return &each;
  }
  return absl::NotFoundError(
      absl::StrCat("job: the coordinator has no job named or numbered \"", job, "\""));
}

trace::RankFootprint MetricsFootprint(const stoker::v1::GetStatusResponse& status,
                                      const stoker::v1::JobStatus& job, uint32_t rank,
                                      const ReportOptions& options) {
  trace::RankFootprint footprint;
  footprint.rank = rank;
  footprint.worker_cpu_utilization = WorkerCpuUtilization(status, job.job_id());
  footprint.workers = job.advice().workers_now();
  footprint.advisor_workers = job.advice().workers_desired();
  if (const stoker::v1::RankStatus* reported = FindRank(job, rank); reported != nullptr) {
    const stoker::v1::ClientStats& stats = reported->stats();
    footprint.trainer_receive_share = std::clamp(stats.receive_busy_fraction(), 0.0, 1.0);
    if (stats.has_gpu_utilization()) {
      footprint.gpu_utilization = std::clamp(stats.gpu_utilization(), 0.0, 1.0);
    }
    if (options.link_bytes_per_second > 0) {
      footprint.link_utilization =
          std::max(0.0, stats.received_wire_bytes_per_second()) / options.link_bytes_per_second;
    }
  }
  return footprint;
}

absl::StatusOr<std::vector<trace::RankVerdict>> AssembleReport(
    const stoker::v1::GetStatusResponse& status, const stoker::v1::JobStatus& job,
    absl::Span<const trace::TraceProcess> timeline, const ReportOptions& options) {
  const std::set<uint32_t> ranks = RanksOf(job, timeline);
  if (ranks.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job.name(), ": no rank has reported or was traced; is a trainer running?"));
  }
  std::vector<trace::RankVerdict> verdicts;
  for (uint32_t rank : ranks) {
    absl::StatusOr<trace::RankFootprint> footprint =
        RankFootprintOf(MetricsFootprint(status, job, rank, options), job, timeline, rank, options);
    if (!footprint.ok()) return footprint.status();
    absl::StatusOr<trace::RankVerdict> verdict = trace::Diagnose(*footprint, options.thresholds);
    if (!verdict.ok()) return verdict.status();
    verdicts.push_back(*std::move(verdict));
  }
  return verdicts;
}

}  // namespace stoker
