#ifndef STOKER_WORKER_SIMULATED_BATCH_H_
#define STOKER_WORKER_SIMULATED_BATCH_H_

// Bench and test facility (WorkerConfig::simulate_batch_*, stoker-worker --simulate-batch-ms,
// --simulate-batch-mode, --simulate-batch-cpu-ms): a batch "produced" without reading the source
// or running the pipeline, so that benchmarks on a small machine measure the protocol (leases,
// credit, streaming, balancing) rather than the blur. Everything else is real: the worker leases
// the task, the batch goes over the real gRPC stream to the real client, which checks and acks it.
//
// SimulateBatch fills `out` like ProduceBatch would for `task`: the same header (task, sample
// indices of the plan, shape, dtype, layout, worker id; labels 0) and a payload of the job's
// batch size in bytes whose content is unspecified (zeros the first time a pooled message is
// used). It does not pace itself: the BatchProducer holds each simulated batch until one
// period after the later of the previous batch's ready time and the moment it took the task, so
// a busy producer thread emits at most one batch per period.
//
// How a simulated batch spends its period is its SimulatedBatchMode:
//   kSleep  the producer thread waits: no CPU, so the figures isolate the protocol;
//   kBurn   the producer thread first spends `cpu` of its own CPU time (CLOCK_THREAD_CPUTIME_ID)
//           writing the payload over and over (BurnThreadCpu), then waits out what is left of
//           the period. It competes for cores like a real producer: on a busy machine the CPU
//           time takes longer than `cpu` of wall time, and the batch is late. With cpu = period
//           the producer is CPU-bound at one batch per `cpu` of CPU time.
//
// Errors: OUT_OF_RANGE for a task past the plan (as ProduceBatch). Thread-safe (the job is).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/worker.pb.h"
#include "worker/job_context.h"

namespace stoker {

enum class SimulatedBatchMode { kSleep, kBurn };

// "sleep" or "burn".
absl::string_view SimulatedBatchModeName(SimulatedBatchMode mode);
// The inverse of SimulatedBatchModeName; INVALID_ARGUMENT naming simulate_batch_mode otherwise.
absl::StatusOr<SimulatedBatchMode> ParseSimulatedBatchMode(absl::string_view name);

// Simulated production of one producer thread (BatchProducer::set_simulation).
struct SimulatedProduction {
  absl::Duration period;  // a batch is ready one period after its task was taken, or later
  SimulatedBatchMode mode = SimulatedBatchMode::kSleep;
  absl::Duration cpu;  // kBurn: the thread CPU time each batch spends, <= period
};

absl::Status SimulateBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                           stoker::v1::BatchMessage* out);

// Writes pseudo-random bytes over `payload` (its size unchanged; a 4 KiB scratch of its own when
// it is empty), pass after pass, until the calling thread's CPU time has grown by at least `cpu`
// since `since` (a ThreadCpuTime() reading of this thread). Returns the thread CPU time spent
// since `since`: >= cpu. Reads the clock after every 64 KiB written.
absl::Duration BurnThreadCpu(absl::Duration cpu, absl::Duration since, std::string* payload);

}  // namespace stoker

#endif  // STOKER_WORKER_SIMULATED_BATCH_H_
