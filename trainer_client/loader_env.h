#ifndef STOKER_TRAINER_CLIENT_LOADER_ENV_H_
#define STOKER_TRAINER_CLIENT_LOADER_ENV_H_

// The Loader's environment, injectable for tests (docs/architecture.md). Every null member gets the
// real implementation: gRPC to LoaderOptions::coordinator_address, gRPC worker streams, the wall
// clock.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/clock.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/pipeline.pb.h"
#include "trainer_client/batch.h"
#include "trainer_client/worker_stream.h"

namespace stoker {

// Runs the to_float / normalize tail of a pipeline on each received batch when the coordinator
// placed it on the client (JobSpec.tail); implemented by ClientTail (client_tail.h). Thread-safe.
class BatchTail {
 public:
  virtual ~BatchTail() = default;
  // The batch as the workers would have sent it. INVALID_ARGUMENT when `batch` is not the
  // workers' uint8 HWC batch.
  virtual absl::StatusOr<Batch> Apply(const Batch& batch) = 0;
  // The converted batch's shape and payload bytes.
  virtual absl::Span<const int64_t> batch_shape() const = 0;
  virtual uint64_t batch_bytes() const = 0;
};

// Creates the tail `tail` for the workers' batches of `worker_batch_shape` ([N, H, W, C] uint8).
using BatchTailFactory = std::function<absl::StatusOr<std::unique_ptr<BatchTail>>(
    const v1::PipelineSpec& tail, absl::Span<const int64_t> worker_batch_shape)>;

// The utilization of the GPU the trainer feeds, sampled once per heartbeat and reported as
// ClientStats.gpu_utilization (for `stoker-ctl report`). The NVML implementation is
// NvmlGpuUtilizationSampler (device/gpu_utilization.h). Called by one thread at a time.
class GpuUtilizationSampler {
 public:
  virtual ~GpuUtilizationSampler() = default;
  // The fraction of the recent past in which a kernel ran on the GPU, in [0, 1]; nullopt when
  // unknown.
  virtual std::optional<double> Sample() = 0;
};

struct LoaderEnv {
  std::shared_ptr<CoordinatorClient> coordinator;
  std::shared_ptr<WorkerStreamFactory> worker_streams;
  // Used for backoff sleeps, reconnect delays, stall escalation and the wait/step statistics.
  // Waits that Stop() must interrupt (the heartbeat period) use real time.
  Clock* clock = nullptr;
  // Lets the Loader run a job's tail (ClientTailFactory()): with it an unset JobSpec.tail asks
  // for AUTO; null: it asks for WORKER, and spec.tail = CLIENT fails with FAILED_PRECONDITION.
  BatchTailFactory tail;
  // The fed GPU's utilization, sampled by the heartbeats; null: none is reported, at no cost.
  std::shared_ptr<GpuUtilizationSampler> gpu_utilization;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_ENV_H_
