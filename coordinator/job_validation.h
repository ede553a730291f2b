#ifndef STOKER_COORDINATOR_JOB_VALIDATION_H_
#define STOKER_COORDINATOR_JOB_VALIDATION_H_

// Checks a JobSpec before the coordinator accepts it, and derives the numbers a job's clients
// and workers need (samples, batches per rank, batch tensor size and shape).
//
// Every error is INVALID_ARGUMENT and its message starts with the offending field, e.g.
// "spec.batch_size: must be > 0" or
// "spec.pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4".

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// The largest batch tensor a job may produce. A batch lives whole in a worker's queue, on the
// wire and in the client's prefetch budget; anything bigger is a mistake in the spec.
inline constexpr uint64_t kMaxBatchBytes = uint64_t{1} << 30;

// What a valid spec implies. Plain data.
struct JobGeometry {
  // Samples in the dataset (N).
  uint64_t num_samples = 0;
  // Batches each rank receives per epoch (equal for all ranks, > 0).
  uint64_t batches_per_rank = 0;
  // Tensor bytes of one batch.
  uint64_t batch_bytes = 0;
  // Tensor shape of one batch: [B, H, W, C] or [B, C, H, W].
  std::vector<int64_t> batch_shape;
};

// OK when the coordinator can run the spec. Besides each field's own rule it refuses a job
// with no batch at all for some rank (drop_last with fewer than batch_size * world_size samples)
// and a batch larger than kMaxBatchBytes.
absl::Status ValidateJobSpec(const stoker::v1::JobSpec& spec);

// Validates `spec` (same errors as ValidateJobSpec) and returns its geometry.
absl::StatusOr<JobGeometry> ComputeJobGeometry(const stoker::v1::JobSpec& spec);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_JOB_VALIDATION_H_
