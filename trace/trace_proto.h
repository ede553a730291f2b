#ifndef STOKER_TRACE_TRACE_PROTO_H_
#define STOKER_TRACE_TRACE_PROTO_H_

// Spans on the wire (proto/stoker/v1/trace.proto): the limits a receiver checks before it keeps
// anything a peer sent (docs/security.md, "Limits"), and the conversions between the messages
// and trace/'s structs. The services call these from their glue; no gRPC here.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "stoker/v1/trace.pb.h"
#include "trace/chrome_trace.h"
#include "trace/span.h"

namespace stoker::trace {

// A batch header's spans (BatchTrace.spans).
inline constexpr int kMaxSpansPerBatch = 64;
// Op names and thread names per message (BatchTrace, TraceProcessSpans), and their length.
inline constexpr int kMaxNamesPerMessage = 64;
inline constexpr size_t kMaxNameBytes = 64;
// What one heartbeat may carry (TraceSpans).
inline constexpr int kMaxProcessesPerHeartbeat = 64;
inline constexpr int kMaxSpansPerHeartbeat = 4096;
// GetTraceRequest.max_spans at most, and what 0 means.
inline constexpr uint32_t kMaxSpansPerPage = 65536;

// INVALID_ARGUMENT starting with `field` (e.g. "header.trace", "trace.processes[2]") when a
// count, a name's length, a span's name_id or extent (end before start) is out of bounds.
absl::Status CheckBatchTrace(const stoker::v1::BatchTrace& trace, absl::string_view field);
absl::Status CheckTraceSpans(const stoker::v1::TraceSpans& trace, absl::string_view field);
// seconds in [1, max_seconds] (--max-trace-seconds): "seconds: ...".
absl::Status CheckStartTraceRequest(const stoker::v1::StartTraceRequest& request,
                                    uint32_t max_seconds);
// max_spans at most kMaxSpansPerPage: "max_spans: ...".
absl::Status CheckGetTraceRequest(const stoker::v1::GetTraceRequest& request);

// A worker's spans of one task for its batch header: the first kMaxSpansPerBatch, with the op
// and thread names they use (at most kMaxNamesPerMessage each, cut to kMaxNameBytes). `names`
// is the recorder's table (SpanRecorder::Names). The clock fields are left to the caller.
stoker::v1::BatchTrace ToBatchTrace(absl::Span<const Span> spans,
                                    const std::vector<std::string>& names,
                                    const absl::flat_hash_map<uint32_t, std::string>& threads);

// A checked BatchTrace's spans as `task`'s, each instant plus `shift_ns` (the sum of the hops'
// offsets that move them into the wanted clock). Spans of a stage this build does not know are
// skipped. REQUIRES: CheckBatchTrace(trace) is OK.
TraceProcess FromBatchTrace(const stoker::v1::BatchTrace& trace, const TaskKey& task,
                            int64_t shift_ns);

// A process's spans for a heartbeat or a GetTrace page, and back (unknown stages skipped).
// REQUIRES for FromProcessSpans: the message passed CheckTraceSpans (or came from
// ToProcessSpans).
stoker::v1::TraceProcessSpans ToProcessSpans(const TraceProcess& process);
TraceProcess FromProcessSpans(const stoker::v1::TraceProcessSpans& message);

}  // namespace stoker::trace

#endif  // STOKER_TRACE_TRACE_PROTO_H_
