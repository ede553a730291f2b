#ifndef STOKER_COORDINATOR_TAIL_PLACEMENT_H_
#define STOKER_COORDINATOR_TAIL_PLACEMENT_H_

// Where a job's pipeline tail runs (JobSpec.tail, docs/decisions/0039-tail-placement.md). The
// coordinator decides it at OpenJob from the spec alone, records the decision in the job's spec
// and hands the tail to each rank (OpenJobResponse.client_tail); the client runs it in ClientTail
// (trainer_client/client_tail.h), bit for bit what the worker would have sent.
//
// The split is at the last op that must run on uint8: the pipeline's final to_float, followed
// only by normalize ops. AUTO places the tail on the client whenever the pipeline splits so and
// has no batch-level mix (which the workers apply after the tail); otherwise on the workers.

#include <optional>

#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

struct TailPlacement {
  // The spec as the job records it: `tail` is CLIENT, or unset for the workers (so that every
  // request that places the same way, WORKER, AUTO or unset, opens the same job).
  v1::JobSpec job_spec;
  // The job as the workers run it: with a client tail, the ops before it and uint8 HWC output.
  v1::JobSpec worker_spec;
  // The tail ops with the job's output dtype and layout; set when the client runs them.
  std::optional<v1::PipelineSpec> client_tail;
};

// Decides `spec.tail` (also on a spec whose tail is already decided, giving the same placement).
// INVALID_ARGUMENT ("tail: ...") when CLIENT is asked for a pipeline that does not split.
absl::StatusOr<TailPlacement> PlaceTail(const v1::JobSpec& spec);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_TAIL_PLACEMENT_H_
