#ifndef STOKER_COORDINATOR_COORDINATOR_TRACE_H_
#define STOKER_COORDINATOR_COORDINATOR_TRACE_H_

// The coordinator trace: the coordinator's side of batch timelines
// (docs/decisions/0046-batch-timeline.md), which owns everything a coordinator keeps of them:
// the StartTrace/GetTrace logic over a bounded trace::TraceStore, the TraceControl heartbeat
// responses carry while a job's window is open, the spans ranks ship in their heartbeats, the
// clock offsets a client heartbeat measures, and the coordinator's own events (leases, hedges,
// consumed reports) as instants. coordinator_trace_client.h collects it from the outside.
//
// Instants are nanoseconds of the coordinator's clock (Options::clock), the reference
// clock of every collected span. The caller checks that the job exists; this class checks the
// requests' fields and bounds what it keeps (Options). Nothing here survives a restart.
//
// Thread-safe. Its lock is taken after the coordinator's.

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "coordinator/cluster_state.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/trace.pb.h"
#include "trace/span.h"
#include "trace/span_recorder.h"
#include "trace/trace_store.h"

namespace stoker {

class CoordinatorTrace {
 public:
  struct Options {
    // Longest window StartTrace opens (--max-trace-seconds).
    uint32_t max_seconds = 600;
    // Spans kept per traced job (--max-trace-spans); more are dropped and counted.
    uint64_t max_spans_per_job = 262144;
    // The coordinator's clock (tests inject a FakeClock). Not owned; outlives this object.
    Clock* clock = Clock::Real();
  };

  // The process name of the coordinator's own events in a trace.
  static constexpr const char* kProcessName = "coordinator";

  explicit CoordinatorTrace(const Options& options);

  int64_t Now() const { return trace::NowNanos(clock_); }

  // Opens (or extends) the job's window. INVALID_ARGUMENT "seconds: ..." outside
  // [1, max_seconds]; RESOURCE_EXHAUSTED when too many jobs are traced (trace_store.h).
  absl::StatusOr<stoker::v1::StartTraceResponse> Start(
      const stoker::v1::StartTraceRequest& request);
  // A page of the job's spans. INVALID_ARGUMENT "max_spans: ..." or "page_token: ...";
  // NOT_FOUND "job_id: ..." when the job was never traced.
  absl::StatusOr<stoker::v1::GetTraceResponse> Read(
      const stoker::v1::GetTraceRequest& request) const;
  // What heartbeat responses about the job carry; nullopt when it is not traced now.
  std::optional<stoker::v1::TraceControl> Control(uint64_t job_id) const;

  // The trace's part of an accepted client heartbeat (`received_ns`: its arrival, on Now()):
  // keeps the spans request.trace carries (the rank's own as "rank R", its workers' as "worker
  // host:port"; spans of `workers` not registered, or of other jobs' tasks, are dropped), sets
  // response.trace while the job is traced, and with request.client_clock_ns,
  // received_clock_ns and sent_clock_ns.
  void AnswerClientHeartbeat(const stoker::v1::ClientHeartbeatRequest& request,
                             const std::vector<WorkerRecord>& workers, int64_t received_ns,
                             stoker::v1::ClientHeartbeatResponse* response);
  // Sets response.trace to the TraceControl of each job of request.jobs that is traced.
  void AnswerWorkerHeartbeat(const stoker::v1::WorkerHeartbeatRequest& request,
                             stoker::v1::WorkerHeartbeatResponse* response) const;

  // Records the coordinator's event `stage` (an instant) of `task` when its job's window is
  // open and the task is sampled. Costs one atomic load and a clock read when no window is open.
  void RecordEvent(trace::Stage stage, const stoker::v1::TaskId& task);

  // Drops a retired job's spans.
  void Forget(uint64_t job_id) { store_.Forget(job_id); }

 private:
  // Keeps the spans a rank of the job shipped (AnswerClientHeartbeat).
  void AddFromRank(uint64_t job_id, uint32_t rank, const stoker::v1::TraceSpans& spans,
                   const std::vector<WorkerRecord>& workers);

  const uint32_t max_seconds_;
  Clock* const clock_;
  trace::TraceStore store_;
  // The latest end of any window opened, grace included: events after it skip the store.
  std::atomic<int64_t> open_until_ns_{0};
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_TRACE_H_
