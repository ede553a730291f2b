#include "coordinator/job_validation.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/pipeline.h"
#include "common/status_macros.h"
#include "coordinator/job_geometry.h"
#include "data/sample_fields.h"
#include "data/source.h"
#include "plan/epoch_plan.h"

namespace stoker {
namespace {

using stoker::v1::JobSpec;

// Errors of the data and augment libraries name fields relative to the JobSpec
// ("dataset.synthetic.height: ..."); the coordinator's callers see them under "spec.".
absl::Status UnderSpec(const absl::Status& status) { return PrefixStatus("spec.", status); }

// The scalar fields, checked before anything is opened or compiled.
absl::Status ValidateScalars(const JobSpec& spec) {
  if (spec.batch_size() == 0) return absl::InvalidArgumentError("spec.batch_size: must be > 0");
  if (spec.world_size() == 0) return absl::InvalidArgumentError("spec.world_size: must be > 0");
  if (spec.epochs() == 0) return absl::InvalidArgumentError("spec.epochs: must be > 0");
  if (!stoker::v1::ShuffleMode_IsValid(spec.shuffle())) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.shuffle: unknown shuffle mode ", spec.shuffle()));
  }
  if (spec.shuffle() == stoker::v1::SHUFFLE_MODE_BLOCK && spec.shuffle_block() == 0) {
    return absl::InvalidArgumentError("spec.shuffle_block: must be > 0 with SHUFFLE_MODE_BLOCK");
  }
  if (spec.sweep_seed() != 0 && spec.shuffle() != stoker::v1::SHUFFLE_MODE_BLOCK &&
      spec.shuffle() != stoker::v1::SHUFFLE_MODE_SHARD_WINDOW) {
    return absl::InvalidArgumentError(
        "spec.sweep_seed: aligns the blocks or shard windows of a sweep's jobs; needs "
        "SHUFFLE_MODE_BLOCK or SHUFFLE_MODE_SHARD_WINDOW");
  }
  if (!stoker::v1::DecodedCache_IsValid(spec.decoded_cache())) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.decoded_cache: unknown value ", spec.decoded_cache()));
  }
  if (spec.has_max_bad_sample_fraction() &&
      !(spec.max_bad_sample_fraction() >= 0 && spec.max_bad_sample_fraction() <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.max_bad_sample_fraction: must be in [0, 1], got ", spec.max_bad_sample_fraction()));
  }
  return absl::OkStatus();
}

}  // namespace

SourceFactory SourceFactoryFor(DatasetIo io) {
  return [io = std::move(io)](const stoker::v1::DatasetSpec& spec, uint64_t seed) {
    return CreateSource(spec, seed, io);
  };
}

absl::Status ValidateJobSpec(const JobSpec& spec, const SourceFactory& open_source) {
  return ComputeJobGeometry(spec, open_source).status();
}

absl::StatusOr<stoker::v1::JobGeometry> ComputeJobGeometry(const JobSpec& spec,
                                                           const SourceFactory& open_source) {
  RETURN_IF_ERROR(ValidateScalars(spec));
  RETURN_IF_ERROR(UnderSpec(ValidateDatasetSpec(spec.dataset())));
  auto source = open_source(spec.dataset(), spec.seed());
  if (!source.ok()) return UnderSpec(source.status());
  RETURN_IF_ERROR(UnderSpec(CheckJobFields(spec, **source)));
  PipelineOptions options;
  options.with_targets = NamesTypedTargets(spec);  // Refuses ops that cannot move targets.
  auto pipeline = Pipeline::Compile(spec.pipeline(), (*source)->format(), options);
  if (!pipeline.ok()) return UnderSpec(pipeline.status());

  const uint64_t num_samples = (*source)->size();
  const uint64_t batches_per_rank =
      BatchesPerRank(num_samples, spec.batch_size(), spec.world_size(), spec.drop_last());
  if (batches_per_rank == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.drop_last: the dataset's ", num_samples,
        " samples give no full batch per rank with batch_size ", spec.batch_size(),
        " and world_size ", spec.world_size(), "; use drop_last=false or a smaller batch"));
  }
  RETURN_IF_ERROR(CheckBatchCounts(spec, batches_per_rank));
  // The workers' plans: O(1) to make, or O(shards) for SHARD_WINDOW, which checks its window and
  // that the dataset is sharded.
  RETURN_IF_ERROR(EpochPlan::Create(spec, num_samples, 0, (*source)->shard_starts()).status());
  const uint64_t per_sample = pipeline->output_bytes_per_sample();
  if (per_sample == 0) {
    return absl::InvalidArgumentError("spec.pipeline: produces empty samples");
  }
  if (per_sample > kMaxBatchBytes / spec.batch_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.batch_size: a batch of ", spec.batch_size(), " samples of ", per_sample,
                     " bytes exceeds the limit of ", kMaxBatchBytes, " bytes per batch"));
  }
  stoker::v1::JobGeometry geometry;
  geometry.set_num_samples(num_samples);
  geometry.set_batches_per_rank(batches_per_rank);
  geometry.set_batch_bytes(per_sample * spec.batch_size());
  for (int64_t d : pipeline->BatchShape(spec.batch_size())) geometry.add_batch_shape(d);
  return geometry;
}

}  // namespace stoker
