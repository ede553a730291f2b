#include "trainer_client/python/dlpack_shapes.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "wire/batch_check.h"

namespace stoker {

absl::StatusOr<std::vector<int64_t>> ImagesDlpackShape(const Batch& batch) {
  RETURN_IF_ERROR(CheckBatchHeader(batch.header(), batch.payload().size()));
  const absl::Span<const int64_t> shape = batch.shape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

absl::StatusOr<std::vector<int64_t>> SoftLabelsDlpackShape(const Batch& batch) {
  const uint64_t values = batch.soft_labels().size();
  if (values == 0) {
    return absl::FailedPreconditionError(
        "soft labels: this batch has none (the pipeline has no batch_mix)");
  }
  const uint64_t samples = batch.num_samples();
  if (samples == 0 || values % samples != 0) {
    return absl::DataLossError(absl::StrCat(
        "header.soft_labels: ", values, " values are not whole rows for ", samples, " samples"));
  }
  return std::vector<int64_t>{static_cast<int64_t>(samples),
                              static_cast<int64_t>(values / samples)};
}

}  // namespace stoker
