#ifndef STOKER_TOOLS_REPORT_ASSEMBLY_H_
#define STOKER_TOOLS_REPORT_ASSEMBLY_H_

// `stoker-ctl report`'s per-rank footprints (trace/bottleneck_report.h, RankFootprint) from the
// two things the coordinator serves (docs/decisions/0053-footprint-metrics.md):
//
//   - the traced window's merged timeline: data wait and step shares, late batches' critical
//     path by stage (trace/footprint.h, from the process named "rank N");
//   - its GetStatus reply: the job's workers' mean busy fraction (worker CPU utilization), each
//     rank's received wire bytes/s over the link's capacity (link utilization; the capacity is
//     the operator's --link-gbps, unknown when not given) and its receive path's busy fraction
//     (trainer receive share), the workers now and the advisor's count.
//
// A rank that reported but has no traced handoff (it took no batch in the window) keeps its
// reported data wait fraction and no late path: its verdict says nothing late was traced.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "stoker/v1/status.pb.h"
#include "trace/bottleneck_report.h"
#include "trace/chrome_trace.h"
#include "trace/footprint.h"

namespace stoker {

struct ReportOptions {
  // The trainers' link capacity in bytes per second; <= 0 when unknown.
  double link_bytes_per_second = 0;
  trace::FootprintOptions footprint;
  trace::BottleneckThresholds thresholds;
};

// The job `job` names in `status`: its name, or its id (full or the short serial).
// NOT_FOUND "job: ..." when none matches.
absl::StatusOr<const stoker::v1::JobStatus*> FindJob(const stoker::v1::GetStatusResponse& status,
                                                     absl::string_view job);

// The footprint metrics of one rank from `status` (the span part left at its defaults).
trace::RankFootprint MetricsFootprint(const stoker::v1::GetStatusResponse& status,
                                      const stoker::v1::JobStatus& job, uint32_t rank,
                                      const ReportOptions& options);

// One diagnosed rank per rank of `job` that reported or appears in `timeline`, by rank.
// FAILED_PRECONDITION when there is none; INVALID_ARGUMENT from Diagnose for a footprint out of
// range (a peer reporting a share above 1).
absl::StatusOr<std::vector<trace::RankVerdict>> AssembleReport(
    const stoker::v1::GetStatusResponse& status, const stoker::v1::JobStatus& job,
    absl::Span<const trace::TraceProcess> timeline, const ReportOptions& options);

}  // namespace stoker

#endif  // STOKER_TOOLS_REPORT_ASSEMBLY_H_
