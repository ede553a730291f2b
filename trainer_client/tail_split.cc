#include "trainer_client/tail_split.h"

namespace stoker {

absl::StatusOr<TailSplit> SplitTail(const v1::JobSpec& spec) {
  const auto& ops = spec.pipeline().ops();
  int start = ops.size();
  while (start > 0 && ops[start - 1].has_normalize()) --start;
  if (start == 0 || !ops[start - 1].has_to_float()) {
    return absl::InvalidArgumentError(
        "tail_on_client: the pipeline must end in to_float, optionally followed by normalize "
        "ops, for the client to run that tail");
  }
  if (spec.pipeline().has_batch_mix()) {
    // The workers would mix the uint8 images before the tail: not the batch they would send.
    return absl::InvalidArgumentError(
        "tail_on_client: not with a batch-level mixup/cutmix (pipeline.batch_mix), which mixes "
        "after the tail");
  }
  --start;  // the to_float
  TailSplit split;
  split.worker_spec = spec;
  v1::PipelineSpec* head = split.worker_spec.mutable_pipeline();
  head->mutable_ops()->DeleteSubrange(start, ops.size() - start);
  head->set_output_dtype(v1::DTYPE_UINT8);
  head->set_output_layout(v1::LAYOUT_HWC);
  for (int i = start; i < ops.size(); ++i) *split.tail.add_ops() = ops[i];
  split.tail.set_output_dtype(spec.pipeline().output_dtype());
  split.tail.set_output_layout(spec.pipeline().output_layout());
  return split;
}

}  // namespace stoker
