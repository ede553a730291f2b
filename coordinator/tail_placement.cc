#include "coordinator/tail_placement.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

// The index of the pipeline's final to_float when only normalize ops follow it and no batch-level
// mix runs after them; otherwise INVALID_ARGUMENT saying why.
absl::StatusOr<int> TailStart(const v1::PipelineSpec& pipeline) {
  const auto& ops = pipeline.ops();
  int start = ops.size();
  while (start > 0 && ops[start - 1].has_normalize()) --start;
  if (start == 0 || !ops[start - 1].has_to_float()) {
    return absl::InvalidArgumentError(
        "tail: a client tail (tail_on_client) needs a pipeline that ends in to_float, "
        "optionally followed by normalize ops");
  }
  if (pipeline.has_batch_mix()) {
    // The workers would mix the uint8 images before the tail: not the batch they would send.
    return absl::InvalidArgumentError(
        "tail: a client tail (tail_on_client) is not possible with a batch-level mixup/cutmix "
        "(pipeline.batch_mix), which mixes after the tail");
  }
  return start - 1;
}

// Recorded unset: the same job as one opened by a client that predates the field (or journaled
// before it), and as WORKER or an AUTO that placed the same way.
TailPlacement OnWorkers(v1::JobSpec spec) {
  spec.clear_tail();
  TailPlacement placement;
  placement.worker_spec = spec;
  placement.job_spec = std::move(spec);
  return placement;
}

TailPlacement OnClient(v1::JobSpec spec, int start) {
  spec.set_tail(v1::TAIL_PLACEMENT_CLIENT);
  TailPlacement placement;
  placement.worker_spec = spec;
  v1::PipelineSpec* head = placement.worker_spec.mutable_pipeline();
  const auto& ops = spec.pipeline().ops();
  head->mutable_ops()->DeleteSubrange(start, ops.size() - start);
  head->set_output_dtype(v1::DTYPE_UINT8);
  head->set_output_layout(v1::LAYOUT_HWC);
  v1::PipelineSpec& tail = placement.client_tail.emplace();
  for (int i = start; i < ops.size(); ++i) *tail.add_ops() = ops[i];
  tail.set_output_dtype(spec.pipeline().output_dtype());
  tail.set_output_layout(spec.pipeline().output_layout());
  placement.job_spec = std::move(spec);
  return placement;
}

}  // namespace

absl::StatusOr<TailPlacement> PlaceTail(const v1::JobSpec& spec) {
  switch (spec.tail()) {
    case v1::TAIL_PLACEMENT_AUTO: {
      absl::StatusOr<int> start = TailStart(spec.pipeline());
      return start.ok() ? OnClient(spec, *start) : OnWorkers(spec);
    }
    case v1::TAIL_PLACEMENT_CLIENT: {
      absl::StatusOr<int> start = TailStart(spec.pipeline());
      if (!start.ok()) return start.status();
      return OnClient(spec, *start);
    }
    case v1::TAIL_PLACEMENT_UNSPECIFIED:
    case v1::TAIL_PLACEMENT_WORKER:
      return OnWorkers(spec);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("tail: unknown placement ", static_cast<int>(spec.tail())));
  }
}

}  // namespace stoker
