#include "coordinator/job_geometry.h"

#include "absl/strings/str_cat.h"
#include "plan/epoch_plan.h"

namespace stoker {

absl::Status CheckBatchCounts(const stoker::v1::JobSpec& spec, uint64_t batches_per_rank) {
  uint64_t global = 0;
  uint64_t total = 0;
  if (__builtin_mul_overflow(batches_per_rank, uint64_t{spec.world_size()}, &global) ||
      global > kMaxGlobalBatches ||
      __builtin_mul_overflow(global, uint64_t{spec.epochs()}, &total)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.epochs: ", batches_per_rank, " batches per rank x ", spec.world_size(),
                     " ranks x ", spec.epochs(), " epochs is too many batches in total (at most ",
                     kMaxGlobalBatches, " per epoch, and 2^64 in all)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<JobGeometry> CheckJobGeometry(const stoker::v1::JobSpec& spec,
                                             const stoker::v1::JobGeometry& geometry,
                                             absl::string_view field) {
  auto bad = [field](absl::string_view name, const auto&... why) -> absl::Status {
    return absl::InvalidArgumentError(absl::StrCat(field, ".", name, ": ", why...));
  };
  if (spec.batch_size() == 0) return bad("spec.batch_size", "must be > 0");
  if (spec.world_size() == 0) return bad("spec.world_size", "must be > 0");
  if (spec.epochs() == 0) return bad("spec.epochs", "must be > 0");
  if (geometry.num_samples() == 0) return bad("geometry.num_samples", "must be > 0 (unset?)");
  const uint64_t expected = BatchesPerRank(geometry.num_samples(), spec.batch_size(),
                                           spec.world_size(), spec.drop_last());
  if (geometry.batches_per_rank() == 0 || geometry.batches_per_rank() != expected) {
    return bad("geometry.batches_per_rank", geometry.batches_per_rank(), " does not follow from ",
               geometry.num_samples(), " samples and the spec (", expected, ")");
  }
  if (absl::Status counts = CheckBatchCounts(spec, expected); !counts.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".", counts.message()));
  }
  if (geometry.batch_bytes() == 0) return bad("geometry.batch_bytes", "must be > 0");
  if (geometry.batch_shape_size() != 4 || geometry.batch_shape(0) != spec.batch_size()) {
    return bad("geometry.batch_shape", "must have 4 dimensions, the first batch_size");
  }
  JobGeometry out;
  out.num_samples = geometry.num_samples();
  out.batches_per_rank = geometry.batches_per_rank();
  out.batch_bytes = geometry.batch_bytes();
  out.batch_shape.assign(geometry.batch_shape().begin(), geometry.batch_shape().end());
  return out;
}

stoker::v1::JobGeometry ToProto(const JobGeometry& geometry) {
  stoker::v1::JobGeometry out;
  out.set_num_samples(geometry.num_samples);
  out.set_batches_per_rank(geometry.batches_per_rank);
  out.set_batch_bytes(geometry.batch_bytes);
  for (int64_t d : geometry.batch_shape) out.add_batch_shape(d);
  return out;
}

}  // namespace stoker
