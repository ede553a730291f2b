#ifndef STOKER_TRACE_SPAN_RECORDER_H_
#define STOKER_TRACE_SPAN_RECORDER_H_

// A process's bounded store of spans (docs/decisions/0046-batch-timeline.md).
//
// Off (sampling 0, the default) recording costs one relaxed atomic load: ScopedSpan asks
// Sampled(), which reads the sampling rate and returns false before any clock is read or
// anything is stored. On, each span is one mutex-guarded copy into a fixed ring that overwrites
// its oldest span when full (counted in dropped()); the owner drains it (a worker into batch
// headers, a client into heartbeats, the coordinator into its per-job buffer).
//
// Sampling is "1 in N tasks" by TaskHash, a fixed function of the task id, so that a worker and
// a client pick the same batches without talking.
//
// Thread-safe.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "trace/span.h"

namespace stoker::trace {

// `clock`'s reading in nanoseconds since the Unix epoch: the instants spans are recorded in.
int64_t NowNanos(Clock* clock);

// NowNanos(Clock::Real()), monotonic: for code that stamps span instants of the real clock
// without a recorder at hand.
int64_t MonotonicNowNanos();

// A fixed mix (SplitMix64's finalizer) of the task id: the same on every machine and build.
uint64_t TaskHash(const TaskKey& task);

class SpanRecorder {
 public:
  // Op names and thread names a recorder keeps at most (further ones get no name).
  static constexpr size_t kMaxNames = 4096;

  struct Options {
    // Spans held at most; the oldest is overwritten beyond. > 0.
    size_t capacity = 65536;
    // The clock spans are read from (tests inject a FakeClock). Not owned; outlives the recorder.
    Clock* clock = Clock::Real();
  };

  explicit SpanRecorder(Options options);
  SpanRecorder(const SpanRecorder&) = delete;
  SpanRecorder& operator=(const SpanRecorder&) = delete;

  // 0: off; 1: every task; N: the tasks whose TaskHash is a multiple of N.
  void SetSampling(uint32_t one_in) { one_in_.store(one_in, std::memory_order_relaxed); }
  uint32_t sampling() const { return one_in_.load(std::memory_order_relaxed); }
  // Whether spans of `task` are recorded now. Off: one relaxed load, nothing else.
  bool Sampled(const TaskKey& task) const {
    const uint32_t one_in = one_in_.load(std::memory_order_relaxed);
    return one_in != 0 && (one_in == 1 || TaskHash(task) % one_in == 0);
  }

  int64_t Now() const { return NowNanos(clock_); }

  // Stores `span`, overwriting the oldest when the ring is full.
  void Record(const Span& span);
  // Removes and returns up to `max` spans, oldest first.
  std::vector<Span> Drain(size_t max);
  size_t size() const;
  // Spans overwritten before they were drained.
  uint64_t dropped() const;

  // The id of an op name for Span::name_id, the same for the same name; 0 for an empty name or
  // once kMaxNames names are held. Call when a pipeline is built, not per batch.
  uint16_t InternName(absl::string_view name);
  // Names by id (index 0 is the empty name).
  std::vector<std::string> Names() const;

  // The calling thread's small id in this process (1, 2, ...; the same for the thread's life).
  static uint32_t CurrentThreadId();
  // Names the calling thread in traces ("producer 0", "stream reader").
  void NameCurrentThread(absl::string_view name);
  absl::flat_hash_map<uint32_t, std::string> ThreadNames() const;

 private:
  Clock* const clock_;
  std::atomic<uint32_t> one_in_{0};

  mutable absl::Mutex mu_;
  std::vector<Span> ring_ ABSL_GUARDED_BY(mu_);
  size_t oldest_ ABSL_GUARDED_BY(mu_) = 0;
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> names_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, uint16_t> name_ids_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, std::string> thread_names_ ABSL_GUARDED_BY(mu_);
};

// Records one stage of `task` from construction to destruction when the recorder samples the
// task at construction; otherwise costs Sampled()'s one load. A null recorder records nothing.
class ScopedSpan {
 public:
  ScopedSpan(SpanRecorder* recorder, Stage stage, const TaskKey& task, uint16_t name_id = 0);
  ~ScopedSpan();
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  SpanRecorder* const recorder_;  // null when not sampled
  Span span_;
};

}  // namespace stoker::trace

#endif  // STOKER_TRACE_SPAN_RECORDER_H_
