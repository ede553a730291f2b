#ifndef STOKER_TRACE_SPAN_H_
#define STOKER_TRACE_SPAN_H_

// The span model of a batch's timeline (docs/decisions/0046-batch-timeline.md): what one thread
// of one process did for one task between two instants of that process's monotonic clock.
//
// Spans of one thread are flat and sequential: a stage is recorded when the previous one ended,
// never nested inside another, so a thread's spans never overlap. Waits that are not on a thread
// (queue, buffer_wait) carry the id of the thread that ends them and may overlap; the trace
// writer moves those onto extra lanes (chrome_trace.h).
//
// Plain values; thread-compatible.

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace stoker::trace {

// Where time goes. Values are stable: they travel on the wire (proto/stoker/v1/trace.proto).
enum class Stage : uint8_t {
  // Worker, per batch, in order.
  kLeaseWait = 1,         // waiting for the coordinator to lease the task
  kShardRead = 2,         // reading sample bytes from storage
  kCacheFetch = 3,        // reading sample bytes from the worker's cache
  kDecode = 4,            // decoding images
  kOp = 5,                // one op of the pipeline (Span::name_id names it)
  kOpGroup = 6,           // a fused group of ops (Span::name_id names it)
  kTail = 7,              // the pipeline's tail (to_float, normalize, layout) on the worker
  kEncode = 8,            // packing the batch tensor
  kCompress = 9,          // compressing the payload
  kQueue = 10,            // waiting in the stream's send queue (credit, the previous write)
  kSend = 11,             // writing the batch on the stream
  kDecodedCacheHit = 12,  // copying decoded samples out of the decoded cache (decode skipped)
  // Trainer client, per batch.
  kReceive = 20,       // reading and parsing the batch message
  kDecompress = 21,    // decompressing the payload
  kBufferWait = 22,    // received, waiting in the client's buffer for Next()
  kHandoff = 23,       // handing the batch to the consumer (client tail, copy out)
  kH2D = 24,           // host-to-device copy (device path)
  kConsumerStep = 25,  // the consumer's step between two Next() calls
  // Coordinator events (instants: start == end).
  kLeaseGranted = 40,    // the task was leased to a worker
  kHedged = 41,          // a backup lease was queued for an overdue task
  kConsumedReport = 42,  // a rank reported the task consumed
};

// Who records a stage.
enum class Role : uint8_t { kCoordinator, kWorker, kClient };

inline constexpr Stage kAllStages[] = {
    Stage::kLeaseWait,    Stage::kShardRead,  Stage::kCacheFetch,
    Stage::kDecode,       Stage::kOp,         Stage::kOpGroup,
    Stage::kTail,         Stage::kEncode,     Stage::kCompress,
    Stage::kQueue,        Stage::kSend,       Stage::kDecodedCacheHit,
    Stage::kReceive,      Stage::kDecompress, Stage::kBufferWait,
    Stage::kHandoff,      Stage::kH2D,        Stage::kConsumerStep,
    Stage::kLeaseGranted, Stage::kHedged,     Stage::kConsumedReport,
};
inline constexpr int kStageCount = sizeof(kAllStages) / sizeof(kAllStages[0]);

// "lease_wait", "shard_read", ..., "consumed_report": the names in traces and reports.
absl::string_view StageName(Stage stage);
// The stage a wire value names; nullopt for a value this build does not know.
std::optional<Stage> StageFromWire(uint32_t value);
// The stage's position in kAllStages (for per-stage arrays).
int StageIndex(Stage stage);
Role StageRole(Stage stage);
// Coordinator events are instants; everything else has a duration.
bool IsInstant(Stage stage);

// A task: the coordinator's unit of work, one batch of one rank (TaskId in common.proto).
struct TaskKey {
  uint64_t job_id = 0;
  uint32_t epoch = 0;
  uint64_t batch_index = 0;

  friend bool operator==(const TaskKey& a, const TaskKey& b) {
    return a.job_id == b.job_id && a.epoch == b.epoch && a.batch_index == b.batch_index;
  }
  friend bool operator!=(const TaskKey& a, const TaskKey& b) { return !(a == b); }
};

struct Span {
  Stage stage = Stage::kLeaseWait;
  // kOp, kOpGroup: the op's name in the recorder's name table (SpanRecorder::InternName); 0 when
  // the span has no name.
  uint16_t name_id = 0;
  // The recording thread's small id within its process (SpanRecorder::CurrentThreadId).
  uint32_t thread_id = 0;
  TaskKey task;
  // Nanoseconds of the recording process's monotonic clock; start_ns <= end_ns.
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  friend bool operator==(const Span& a, const Span& b) {
    return a.stage == b.stage && a.name_id == b.name_id && a.thread_id == b.thread_id &&
           a.task == b.task && a.start_ns == b.start_ns && a.end_ns == b.end_ns;
  }
};

}  // namespace stoker::trace

#endif  // STOKER_TRACE_SPAN_H_
