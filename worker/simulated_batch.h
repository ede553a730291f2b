#ifndef STOKER_WORKER_SIMULATED_BATCH_H_
#define STOKER_WORKER_SIMULATED_BATCH_H_

// Bench and test facility (WorkerConfig::simulate_batch_period, --simulate-batch-ms): a batch
// "produced" without reading the source or running the pipeline, so that benchmarks on a small
// machine measure the protocol (leases, credit, streaming, balancing) rather than the blur.
// Everything else is real: the worker leases the task, the batch goes over the real gRPC stream
// to the real client, which checks and acks it.
//
// SimulateBatch fills `out` like ProduceBatch would for `task`: the same header (task, sample
// indices of the plan, shape, dtype, layout, worker id; labels 0) and a payload of the job's
// batch size in bytes whose content is unspecified (zeros the first time a pooled message is
// used). It does not pace itself: the BatchProducer holds each simulated batch until one
// period after the later of the previous batch's ready time and the moment it took the task, so
// a busy producer thread emits exactly one batch per period.
//
// Errors: OUT_OF_RANGE for a task past the plan (as ProduceBatch). Thread-safe (the job is).

#include <cstdint>

#include "absl/status/status.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/worker.pb.h"
#include "worker/job_context.h"

namespace stoker {

absl::Status SimulateBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                           stoker::v1::BatchMessage* out);

}  // namespace stoker

#endif  // STOKER_WORKER_SIMULATED_BATCH_H_
