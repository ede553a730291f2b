#include "coordinator/tail_placement.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/tail_split.h"

namespace stoker {
namespace {

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
