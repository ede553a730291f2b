#ifndef STOKER_WORKER_PRODUCTION_WINDOW_H_
#define STOKER_WORKER_PRODUCTION_WINDOW_H_

// A worker's recent production, as the coordinator's advisor needs it: over the last ~10
// seconds, samples per second per job and how much of the worker producing them took
// (WorkerStats, reported in every heartbeat):
//   busy_fraction         its producer threads' CPU time on tasks / their wall time;
//   occupied_fraction     their wall time holding a task, running or waiting for a core (on a
//                         contended or throttled host the CPU time alone says too little);
//   process_cpu_fraction  its process's CPU time / the CPUs the process may use, when the
//                         process is the worker's own: the gRPC threads that send its batches
//                         spend CPU that no producer thread accounts for.
// A task's time runs from taking it to handing its batch to its stream, so the encoding and
// send that run on the producer thread count as the task's.

#include <cstdint>
#include <map>
#include <optional>

#include "absl/time/time.h"
#include "common/sliding_window.h"
#include "stoker/v1/coordinator.pb.h"

namespace stoker {

// What one task took of its producer thread.
struct TaskTime {
  absl::Duration cpu;   // the thread's CPU time
  absl::Duration wall;  // >= cpu
};

// Thread-compatible.
class ProductionWindow {
 public:
  // `process_cpus`: the CPUs the worker's own process may use; 0 when the process is not the
  // worker's alone (tests, hybrid mode), and process_cpu_fraction is then not reported.
  // REQUIRES: threads > 0.
  ProductionWindow(absl::Time start, uint32_t threads, uint32_t process_cpus = 0);

  // One task finished at `now`: `samples` samples of `job_id` that took `time` of one thread.
  void Record(absl::Time now, uint64_t job_id, const TaskTime& time, uint32_t samples);
  // The process's CPU time so far (ProcessCpuTime()), read at `now`; the CPU time between
  // successive readings is counted at the later one. Ignored without process_cpus.
  void RecordProcessCpu(absl::Time now, absl::Duration process_cpu);
  // Sets stats' busy_fraction, occupied_fraction, process_cpu_fraction (once two readings
  // apart) and job_rates (jobs with something in the window).
  void Report(absl::Time now, stoker::v1::WorkerStats* stats) const;

 private:
  // Jobs kept before idle ones are forgotten.
  static constexpr size_t kMaxJobs = 16;

  const absl::Time start_;
  const uint32_t threads_;
  const uint32_t process_cpus_;
  SlidingWindow busy_seconds_;
  SlidingWindow occupied_seconds_;
  std::map<uint64_t, SlidingWindow> samples_by_job_;
  // From the first RecordProcessCpu on: process CPU seconds, and the latest reading.
  std::optional<SlidingWindow> process_cpu_seconds_;
  absl::Duration last_process_cpu_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_PRODUCTION_WINDOW_H_
