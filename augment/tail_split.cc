#include "augment/tail_split.h"

#include "absl/status/status.h"

namespace stoker {

absl::StatusOr<int> TailStart(const v1::PipelineSpec& pipeline) {
  const auto& ops = pipeline.ops();
  int start = ops.size();
  while (start > 0 && ops[start - 1].has_normalize()) --start;
  if (start == 0 || !ops[start - 1].has_to_float()) {
    return absl::InvalidArgumentError(
        "tail: a client tail (tail \"client\") needs a pipeline that ends in to_float, "
        "optionally followed by normalize ops");
  }
  if (pipeline.has_batch_mix()) {
    // The workers would mix the uint8 images before the tail: not the batch they would send.
    return absl::InvalidArgumentError(
        "tail: a client tail (tail \"client\") is not possible with a batch-level mixup/cutmix "
        "(pipeline.batch_mix), which mixes after the tail");
  }
  return start - 1;
}

}  // namespace stoker
