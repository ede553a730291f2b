#ifndef STOKER_COORDINATOR_COORDINATOR_TRACE_CLIENT_H_
#define STOKER_COORDINATOR_COORDINATOR_TRACE_CLIENT_H_

// The client side of the coordinator trace (coordinator_trace.h is the coordinator's side):
// collects a job's batch timeline from its coordinator (docs/decisions/0046-batch-timeline.md):
// StartTrace, wait out the window, then page GetTrace until the coordinator's window (with its
// grace for the last heartbeats) has closed and every page is read. What `stoker-ctl trace`,
// `stoker-ctl report` and the Python Loader.trace share; they differ only in what they make of
// the processes (trace::WriteChromeTrace, the bottleneck report).
//
// No gRPC here: the coordinator is a CoordinatorClient (its gRPC implementation, or a fake).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/coordinator_client.h"
#include "trace/chrome_trace.h"

namespace stoker {

struct CollectTraceOptions {
  uint64_t job_id = 0;
  // The window, seconds (1..the coordinator's --max-trace-seconds).
  uint32_t seconds = 10;
  // Record 1 in N tasks; 0: every task.
  uint32_t sample_one_in = 0;
  // Spans per GetTrace page (1..65536).
  uint32_t page_spans = 65536;
  // Between two reads once the pages caught up with what the coordinator holds.
  absl::Duration poll = absl::Milliseconds(500);
  // Reading gives up (DEADLINE_EXCEEDED) this long after the window's end: a coordinator whose
  // window never closes (it restarted and lost it) does not hang the caller.
  absl::Duration give_up_after = absl::Seconds(60);
  // Time for the waits (FakeClock in tests).
  Clock* clock = Clock::Real();
};

struct CollectedTrace {
  // One per process, in the timeline's order: the coordinator, the workers (by name), the
  // ranks (by number); spans in the coordinator's monotonic clock.
  std::vector<trace::TraceProcess> processes;
  // Spans the coordinator could not keep (its --max-trace-spans).
  uint64_t dropped_spans = 0;
};

// StartTrace + wait + every GetTrace page, merged per process. Errors: the RPCs' (INVALID_ARGUMENT
// "seconds: ...", NOT_FOUND for an unknown job, PERMISSION_DENIED for a role not allowed), and
// DEADLINE_EXCEEDED past options.give_up_after.
absl::StatusOr<CollectedTrace> CollectTrace(CoordinatorClient& coordinator,
                                            const CollectTraceOptions& options);

// CollectTrace written as Chrome Trace Event JSON (trace/chrome_trace.h): what
// Loader.trace returns.
absl::StatusOr<std::string> CollectTraceJson(CoordinatorClient& coordinator,
                                             const CollectTraceOptions& options);

// `processes` in the timeline's order (coordinator, workers by name, ranks by number).
void SortTraceProcesses(std::vector<trace::TraceProcess>* processes);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_TRACE_CLIENT_H_
