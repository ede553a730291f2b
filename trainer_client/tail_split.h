#ifndef STOKER_TRAINER_CLIENT_TAIL_SPLIT_H_
#define STOKER_TRAINER_CLIENT_TAIL_SPLIT_H_

// The job split of "tail to the trainer" (LoaderOptions::tail_on_client; the tail itself runs in
// ClientTail, trainer_client/client_tail.h): the workers' part of the pipeline and the tail.

#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

struct TailSplit {
  // The job as the workers run it: the ops before the tail, uint8 HWC output.
  v1::JobSpec worker_spec;
  // The tail ops with the original output dtype and layout.
  v1::PipelineSpec tail;
};

// INVALID_ARGUMENT ("tail_on_client: ...") when the pipeline does not end in to_float followed
// only by normalize ops.
absl::StatusOr<TailSplit> SplitTail(const v1::JobSpec& spec);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_TAIL_SPLIT_H_
