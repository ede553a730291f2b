#ifndef STOKER_TRACE_FOOTPRINT_H_
#define STOKER_TRACE_FOOTPRINT_H_

// A rank's footprint (bottleneck_report.h, RankFootprint) from a merged timeline: the part the
// spans can tell. The consumer's thread alternates handoff T1, consumer_step T1, handoff T2, ...;
// the gap between a step's end and the next handoff's start is time the consumer spent waiting
// in Next() for data. A batch whose handoff waited at least Options::late_wait_ns is late, and
// every span of its task (worker and client stages) counts toward late_stage_seconds.
//
// Utilizations (worker CPU, link, trainer receive threads) and the advisor's worker count come
// from metrics, not spans: the caller fills them in.
//
// Pure function; thread-safe.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "trace/bottleneck_report.h"
#include "trace/chrome_trace.h"

namespace stoker::trace {

struct FootprintOptions {
  // A wait in Next() this long or longer makes the batch handed off after it late.
  int64_t late_wait_ns = 100'000;
};

// The footprint of the process named `rank_process` ("rank 3") in `timeline`, from its
// handoff and consumer_step spans and the spans of its late batches' tasks in every process.
// NOT_FOUND "rank_process: ..." when no process has that name; FAILED_PRECONDITION when it has
// no handoff span (nothing to measure).
absl::StatusOr<RankFootprint> FootprintFromTimeline(absl::Span<const TraceProcess> timeline,
                                                    absl::string_view rank_process, uint32_t rank,
                                                    const FootprintOptions& options = {});

}  // namespace stoker::trace

#endif  // STOKER_TRACE_FOOTPRINT_H_
