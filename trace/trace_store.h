#ifndef STOKER_TRACE_TRACE_STORE_H_
#define STOKER_TRACE_TRACE_STORE_H_

// The coordinator's collected spans, per traced job (docs/decisions/0046-batch-timeline.md):
// StartTrace opens a window, heartbeat responses read it (Window), heartbeats and the
// coordinator's own events add spans (Add), GetTrace reads them back by pages (Read).
//
// Bounded: at most Options::max_jobs jobs traced at once, Options::max_spans_per_job spans and
// Options::max_processes_per_job processes a job (spans beyond are dropped and counted, never the
// older ones, so that page tokens stay valid), kMaxNamesPerProcess op and thread names a process.
// Spans are taken until the window's end plus Options::grace_ns (what was recorded in the window
// arrives with the next heartbeat).
//
// Instants are nanoseconds of the coordinator's monotonic clock, passed in by the caller.
// Thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "trace/chrome_trace.h"

namespace stoker::trace {

class TraceStore {
 public:
  struct Options {
    size_t max_jobs = 16;
    size_t max_spans_per_job = 262144;
    size_t max_processes_per_job = 1024;
    int64_t grace_ns = 5'000'000'000;
  };

  // What heartbeat responses carry (TraceControl).
  struct Window {
    uint32_t sample_one_in = 1;
    int64_t remaining_ns = 0;
  };

  struct Page {
    // Processes in the order they first sent spans, each with the page's spans of it.
    std::vector<TraceProcess> processes;
    // The token of the next page; 0 once the window is closed and this page reached the end.
    uint64_t next_token = 0;
    // The window (with its grace) is still open.
    bool tracing = false;
    uint64_t dropped_spans = 0;
  };

  explicit TraceStore(Options options) : options_(options) {}

  // Opens `job_id`'s window from `now_ns` for `duration_ns` (or moves the end of an open one),
  // sampling 1 in `sample_one_in` tasks (0 means 1), and returns its end. Spans of an earlier
  // window of the job are kept. RESOURCE_EXHAUSTED when max_jobs other jobs have open windows
  // or spans kept.
  absl::StatusOr<int64_t> Start(uint64_t job_id, int64_t now_ns, int64_t duration_ns,
                                uint32_t sample_one_in);
  // The job's window at `now_ns`; nullopt when it is not traced (never, or its end has passed).
  std::optional<Window> WindowAt(uint64_t job_id, int64_t now_ns) const;
  // Adds spans of the process named `process.name` of the job while its window, with its
  // grace, is open; ignored otherwise (a late heartbeat) and for a job with no window.
  void Add(uint64_t job_id, int64_t now_ns, const TraceProcess& process);
  // Up to `max_spans` spans (0 counts as 1) from `token` (0: the first page; else a previous
  // page's next_token). NOT_FOUND "job_id: ..." when the job was never traced (or forgotten);
  // INVALID_ARGUMENT "page_token: ..." past the spans kept.
  absl::StatusOr<Page> Read(uint64_t job_id, uint64_t token, size_t max_spans,
                            int64_t now_ns) const;
  // Drops a retired job's spans.
  void Forget(uint64_t job_id);

 private:
  struct JobTrace {
    int64_t until_ns = 0;
    uint32_t sample_one_in = 1;
    // Processes' names, op and thread names and bounds; their spans stay empty here.
    std::vector<TraceProcess> processes;
    absl::flat_hash_map<std::string, size_t> process_index;
    // Every span kept, in arrival order, with the index of its process.
    std::vector<std::pair<size_t, Span>> spans;
    uint64_t dropped_spans = 0;
  };

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, JobTrace> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker::trace

#endif  // STOKER_TRACE_TRACE_STORE_H_
