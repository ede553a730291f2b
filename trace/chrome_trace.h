#ifndef STOKER_TRACE_CHROME_TRACE_H_
#define STOKER_TRACE_CHROME_TRACE_H_

// Writes a merged batch timeline as Chrome Trace Event JSON, which Perfetto UI
// (ui.perfetto.dev) and chrome://tracing open:
//
//   {"displayTimeUnit":"ms","traceEvents":[
//     {"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"coordinator"}},
//     {"name":"thread_name","ph":"M","ts":0,"pid":2,"tid":1,"args":{"name":"producer 0"}},
//     {"name":"decode","cat":"decode","ph":"X","ts":12.345,"dur":4.000,"pid":2,"tid":1,
//      "args":{"job":1,"epoch":0,"batch":17}},
//     {"name":"lease_granted","cat":"lease_granted","ph":"i","s":"t","ts":0.000,...}, ...]}
//
// One process (pid) per machine role in the order given (coordinator, each worker, each rank),
// one track (tid) per recording thread. Spans are complete events ("X", ts and dur in
// microseconds, ns precision, from the earliest span of the trace); coordinator events are
// thread-scoped instants ("i"). Spans of one thread that overlap (waits such as queue and
// buffer_wait) go to extra lanes of that thread, named "<thread> +1", "+2": every track's
// complete events are disjoint, as ValidateChromeTrace checks. kOp / kOpGroup spans are named by
// their op name.
//
// REQUIRES: start_ns <= end_ns for every span (the conversion from the wire refuses others).
// Pure function; thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "trace/span.h"

namespace stoker::trace {

// One process of the merged timeline.
struct TraceProcess {
  // "coordinator", "worker 10.0.0.5:7000", "rank 3".
  std::string name;
  // In the timeline's reference clock (the coordinator's): converted by whoever collected them.
  std::vector<Span> spans;
  // The recorder's op names (SpanRecorder::Names): index = Span::name_id.
  std::vector<std::string> op_names;
  // Track names by thread id; a thread without one is "thread <id>".
  absl::flat_hash_map<uint32_t, std::string> thread_names;
  // How far this process's instants may be from the reference clock (clock_offset.h); written
  // in the process's metadata ("clock_error_bound_us").
  int64_t clock_error_bound_ns = 0;
};

std::string WriteChromeTrace(absl::Span<const TraceProcess> processes);

// Op names and thread names a merged process keeps (a pipeline has at most 64 ops; a worker a
// few hundred threads at most), so that what peers send cannot grow a collector's tables.
inline constexpr size_t kMaxNamesPerProcess = 256;

// Adds `from`'s op names and thread names to `into`'s (the same process seen in pieces: a
// worker's batch headers, a rank's heartbeats) and keeps the larger clock error bound. Returns,
// by `from`'s name id, the id of the same name in `into` (0 for a name dropped at
// kMaxNamesPerProcess: such spans keep the stage's name, such threads "thread <id>").
std::vector<uint16_t> MergeNames(const TraceProcess& from, TraceProcess* into);
// MergeNames, then appends `from`'s spans to `into` with their name ids renumbered.
void MergeProcess(const TraceProcess& from, TraceProcess* into);

}  // namespace stoker::trace

#endif  // STOKER_TRACE_CHROME_TRACE_H_
