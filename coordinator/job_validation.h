#ifndef STOKER_COORDINATOR_JOB_VALIDATION_H_
#define STOKER_COORDINATOR_JOB_VALIDATION_H_

// Checks a JobSpec before the coordinator accepts it, and derives the numbers a job's clients
// and workers need (samples, batches per rank, batch tensor size and shape). This is the one
// place the coordinator reads a dataset; ClusterState only checks the result (job_geometry.h).
//
// Every error is INVALID_ARGUMENT and its message starts with the offending field, e.g.
// "spec.batch_size: must be > 0" or
// "spec.pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4".

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/dataset_io.h"
#include "data/source.h"
#include "stoker/v1/journal.pb.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// The largest batch tensor a job may produce. A batch lives whole in a worker's queue, on the
// wire and in the client's prefetch budget; anything bigger is a mistake in the spec.
inline constexpr uint64_t kMaxBatchBytes = uint64_t{1} << 30;

// Opens a job's dataset: CreateSource through the coordinator's DatasetIo (SourceFactoryFor) in
// production; tests inject one that fails, counts its calls or stands for a server that is down.
// Must be thread-safe.
using SourceFactory = std::function<absl::StatusOr<std::unique_ptr<Source>>(
    const stoker::v1::DatasetSpec& spec, uint64_t seed)>;

// CreateSource (data/source.h) reading through `io`, as a SourceFactory.
SourceFactory SourceFactoryFor(DatasetIo io);

// OK when the coordinator can run the spec. Besides each field's own rule it refuses a job
// with no batch at all for some rank (drop_last with fewer than batch_size * world_size samples)
// and a batch larger than kMaxBatchBytes. Opens the dataset with `open_source` (I/O): never
// under a lock.
absl::Status ValidateJobSpec(const stoker::v1::JobSpec& spec, const SourceFactory& open_source);

// Validates `spec` (same errors as ValidateJobSpec, and the factory's errors under "spec.") and
// returns what it implies (samples, batches per rank, batch bytes and shape), opening the
// dataset with `open_source`. I/O: never under a lock.
absl::StatusOr<stoker::v1::JobGeometry> ComputeJobGeometry(const stoker::v1::JobSpec& spec,
                                                           const SourceFactory& open_source);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_JOB_VALIDATION_H_
