#ifndef STOKER_TRACE_CLIENT_TRACE_H_
#define STOKER_TRACE_CLIENT_TRACE_H_

// The trainer client's side of batch timelines (docs/decisions/0046-batch-timeline.md): its own
// stages of sampled batches (receive or decompress on the stream's callback thread; buffer_wait,
// handoff and the consumer's step on the consumer's thread), the spans its workers put in batch
// headers, and the two clock hops that move everything into the coordinator's clock:
//   hop 1, worker -> client, per worker (every stream of it samples the same two clocks):
//     t0 = Credit.client_clock_ns, t1/t2 = the worker's BatchTrace.credit_received_ns/send_ns,
//     t3 = the batch's arrival;
//   hop 2, client -> coordinator: t0 = ClientHeartbeatRequest.client_clock_ns, t1/t2 = the
//     response's received/sent_clock_ns, t3 = the response's arrival.
// The worker's send stage (its write, the link, the client's read) is the span from send_ns to
// the arrival, on the worker's stream writer track.
//
// Each offset is pinned in a trace window (until tracing turns off and on again): the worker's at
// its first estimate (every sample holds a batch's transmission), the coordinator's at the best
// of the window's first kSamplesBeforePin heartbeat round trips: one process's spans all move by
// the same amount, so spans that did not overlap in their own clock do not overlap in the
// coordinator's. The clocks' drift over the window (tens of ppm) adds to the error bound, which is
// the pinned estimate's.
//
// Sampling follows the coordinator (ClientHeartbeatResponse.trace): off, every method costs one
// relaxed load and reads no clock. Spans wait in the client's clock (bounded: the recorder's
// ring, kMaxPendingWorkerSpans) until a hop-2 estimate exists, then go out with heartbeats
// within trace_proto.h's limits.
//
// Thread-safe.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.pb.h"
#include "trace/chrome_trace.h"
#include "trace/clock_offset.h"
#include "trace/span.h"
#include "trace/span_recorder.h"

namespace stoker {

class ClientTrace {
 public:
  // Worker spans held at most while waiting for a heartbeat; more are dropped (counted).
  static constexpr size_t kMaxPendingWorkerSpans = 65536;
  // Heartbeat round trips of a window before its coordinator offset is pinned (the one with
  // the smallest delay of them): the rank's own spans wait in the ring meanwhile.
  static constexpr int kSamplesBeforePin = 4;
  // Arrival instants of sampled batches remembered for their buffer_wait spans.
  static constexpr size_t kMaxAcceptedTasks = 65536;

  // `clock`: the client's clock (tests inject a FakeClock). Not owned; outlives this object.
  explicit ClientTrace(Clock* clock = Clock::Real());

  bool on() const { return recorder_.sampling() != 0; }
  bool Sampled(const v1::TaskId& task) const { return recorder_.Sampled(KeyOf(task)); }
  int64_t Now() const { return recorder_.Now(); }
  // The client clock for a Credit or a heartbeat request: Now() while on, else 0 (no read).
  int64_t ClockIfOn() const { return on() ? Now() : 0; }

  // Hop 2 and the switch: `request_clock_ns` is the request's client_clock_ns (0: no sample).
  void OnHeartbeatResponse(int64_t request_clock_ns, const v1::ClientHeartbeatResponse& response);
  // A heartbeat failed: nobody renews the window, tracing stops (held spans stay for the next
  // heartbeat that goes through).
  void OnHeartbeatFailed() { recorder_.SetSampling(0); }

  // A batch with header.trace arrived at `arrived_ns` (client clock): a hop-1 sample, and the
  // worker's spans (plus its send span) kept for the next heartbeat. A header whose trace
  // breaks trace_proto.h's limits is ignored.
  void OnWorkerSpans(const v1::BatchHeader& header, int64_t arrived_ns);

  // One of this client's stages of `task` on the calling thread, named "`thread_name` <id>".
  void Record(trace::Stage stage, const v1::TaskId& task, int64_t start_ns, int64_t end_ns,
              const char* thread_name);
  // A sampled batch entered the buffer at `ns`; TakeAccepted returns (and forgets) it.
  void OnAccepted(const v1::TaskId& task, int64_t ns);
  std::optional<int64_t> TakeAccepted(const v1::TaskId& task);

  // The consumer's side of a sampled batch, on its thread: Next took `task` from the buffer (its
  // buffer_wait ends); the Loader handed it out, after the client tail (its handoff); the caller
  // copied it to a device (an h2d span, after which the consumer's step starts); the consumer
  // called Next again (its step since the last hand-out ends; one relaxed load while none is
  // open). OnPopped ignores a task that is not sampled, OnHandedOut one that was not popped last.
  void OnPopped(const v1::TaskId& task);
  void OnHandedOut(const v1::TaskId& task);
  void OnDeviceCopy(const v1::TaskId& task, int64_t start_ns, int64_t end_ns);
  void OnNextCalled();

  // Moves the spans held into request->trace, in the coordinator's clock, within
  // kMaxProcessesPerHeartbeat and kMaxSpansPerHeartbeat; nothing before a hop-2 estimate.
  void FillHeartbeat(v1::ClientHeartbeatRequest* request);

  // Spans dropped for want of room or of a clock estimate.
  uint64_t dropped() const;

 private:
  static trace::TaskKey KeyOf(const v1::TaskId& task) {
    return trace::TaskKey{task.job_id(), task.epoch(), task.batch_index()};
  }

  trace::SpanRecorder recorder_;
  mutable absl::Mutex mu_;
  trace::ClockOffsetEstimator coordinator_offset_ ABSL_GUARDED_BY(mu_);
  std::optional<trace::ClockOffset> pinned_coordinator_ ABSL_GUARDED_BY(mu_);
  int coordinator_samples_ ABSL_GUARDED_BY(mu_) = 0;  // in this window
  // By worker id.
  absl::flat_hash_map<uint64_t, trace::ClockOffsetEstimator> worker_offsets_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, trace::ClockOffset> pinned_workers_ ABSL_GUARDED_BY(mu_);
  // Worker spans in the client's clock, by worker id; their bound is hop 1's.
  absl::flat_hash_map<uint64_t, trace::TraceProcess> workers_ ABSL_GUARDED_BY(mu_);
  size_t pending_worker_spans_ ABSL_GUARDED_BY(mu_) = 0;
  // By (epoch, batch index): one job per client.
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, int64_t> accepted_ ABSL_GUARDED_BY(mu_);
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  // The sampled batch popped last and when, until it is handed out; the last one handed out and
  // when its consumer step starts (step_open_: handed_out_ is set).
  std::optional<std::pair<v1::TaskId, int64_t>> popped_ ABSL_GUARDED_BY(mu_);
  std::optional<std::pair<v1::TaskId, int64_t>> handed_out_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> step_open_{false};
};

}  // namespace stoker

#endif  // STOKER_TRACE_CLIENT_TRACE_H_
