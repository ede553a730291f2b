#ifndef STOKER_AUGMENT_TAIL_SPLIT_H_
#define STOKER_AUGMENT_TAIL_SPLIT_H_

// Where a pipeline's tail starts (JobSpec.tail, docs/decisions/0039-tail-placement.md): the last
// op that must run on uint8 is the one before it. The coordinator splits jobs with it
// (coordinator/tail_placement.h); a trainer delivering to a GPU asks it whether the pipeline has
// a tail the device can run (trainer_client/device/tail_on_device.h).

#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// The index of the pipeline's final to_float when only normalize ops follow it and no
// batch-level mix runs after them; otherwise INVALID_ARGUMENT ("tail: ...") saying why.
absl::StatusOr<int> TailStart(const v1::PipelineSpec& pipeline);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TAIL_SPLIT_H_
