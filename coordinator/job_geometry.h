#ifndef STOKER_COORDINATOR_JOB_GEOMETRY_H_
#define STOKER_COORDINATOR_JOB_GEOMETRY_H_

// The pure checks ClusterState::Apply makes on a job as journaled: its spec's scalars and the
// geometry OpenJob derived from the dataset (stoker.v1.JobGeometry). Nothing here opens a file,
// a URL or a pipeline: replaying a journal must not depend on the outside world
// (docs/architecture.md, State and journal). Computing a geometry from the world is
// job_validation.h's ComputeJobGeometry.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stoker/v1/journal.pb.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// A job's stoker.v1.JobGeometry as ClusterState keeps it. Plain data.
struct JobGeometry {
  // Samples in the dataset (N).
  uint64_t num_samples = 0;
  // Batches each rank receives per epoch (equal for all ranks, > 0).
  uint64_t batches_per_rank = 0;
  // Tensor bytes of one batch.
  uint64_t batch_bytes = 0;
  // Tensor shape of one batch: [B, H, W, C] or [B, C, H, W].
  std::vector<int64_t> batch_shape;

  bool operator==(const JobGeometry& other) const {
    return num_samples == other.num_samples && batches_per_rank == other.batches_per_rank &&
           batch_bytes == other.batch_bytes && batch_shape == other.batch_shape;
  }
  bool operator!=(const JobGeometry& other) const { return !(*this == other); }
};

// OK when `geometry` is one a valid `spec` could have: batch_size, world_size and epochs > 0,
// num_samples > 0, batches_per_rank > 0 and equal to BatchesPerRank(num_samples, ...) of the
// spec, batch_bytes > 0, batch_shape of rank 4 starting with batch_size, and batch counts that
// pass CheckBatchCounts. Otherwise INVALID_ARGUMENT naming the field under `field`
// ("create_job.geometry.batches_per_rank: ...").
// Returns the geometry when it passes, as plain data.
absl::StatusOr<JobGeometry> CheckJobGeometry(const stoker::v1::JobSpec& spec,
                                             const stoker::v1::JobGeometry& geometry,
                                             absl::string_view field);

// The most global batches (batches_per_rank x world_size) of one epoch: BatchIndexLimit of it
// (epoch_plan.h) and every task count derived from it stay inside 64 bits.
inline constexpr uint64_t kMaxGlobalBatches = uint64_t{1} << 61;

// OK when batches_per_rank x spec.world_size is at most kMaxGlobalBatches and that times
// spec.epochs fits in 64 bits (products checked, never wrapped); otherwise INVALID_ARGUMENT
// "spec.epochs: ... too many batches in total ...".
absl::Status CheckBatchCounts(const stoker::v1::JobSpec& spec, uint64_t batches_per_rank);

// The proto of `geometry` (for journal records, snapshots and responses).
stoker::v1::JobGeometry ToProto(const JobGeometry& geometry);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_JOB_GEOMETRY_H_
