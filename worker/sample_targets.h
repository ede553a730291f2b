#ifndef STOKER_WORKER_SAMPLE_TARGETS_H_
#define STOKER_WORKER_SAMPLE_TARGETS_H_

// The typed targets of one sample on their way through a worker
// (docs/decisions/0068-typed-targets-on-the-wire.md): the stored values the source read into
// SampleBuffer.fields → DecodeStoredTargets on the image's canvas → Pipeline::RunWithTargets (the
// batch producer) → AppendWireTarget into the batch's field columns.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "augment/pipeline.h"
#include "augment/targets/targets.h"
#include "data/source.h"

namespace stoker {

// The targets of `sample`, whose field values are those of `fields` in order (JobContext::fields):
// the typed ones among them decoded at the canvas `pipeline` wants for `input`
// (Pipeline::TargetCanvas). Errors, all bad-sample errors (common/bad_sample.h) that replace the
// sample: the decode op's (the header), DecodeStoredTargets's (kBadAnnotation, kTooLarge).
absl::StatusOr<SampleTargets> ReadSampleTargets(const std::vector<std::string>& fields,
                                                const SampleBuffer& sample,
                                                const Pipeline& pipeline, const SampleInput& input,
                                                PipelineWorkspace* workspace);

}  // namespace stoker

#endif  // STOKER_WORKER_SAMPLE_TARGETS_H_
