#include "worker/sample_targets.h"

#include "augment/targets/target_codec.h"
#include "common/status_macros.h"

namespace stoker {

absl::StatusOr<SampleTargets> ReadSampleTargets(const std::vector<std::string>& fields,
                                                const SampleBuffer& sample,
                                                const Pipeline& pipeline, const SampleInput& input,
                                                PipelineWorkspace* workspace) {
  StoredTargetValues values;
  for (size_t f = 0; f < fields.size(); ++f) {
    const absl::Span<const uint8_t> value(sample.fields[f]);
    if (fields[f] == kBoxesField) values.boxes = value;
    if (fields[f] == kBoxLabelsField) values.box_labels = value;
    if (fields[f] == kMasksField) values.masks = value;
    if (fields[f] == kKeypointsField) values.keypoints = value;
    if (fields[f] == kSemanticMaskField) values.semantic_mask = value;
  }
  ASSIGN_OR_RETURN(const ImageShape canvas, pipeline.TargetCanvas(input, workspace));
  return DecodeStoredTargets(values, canvas.height, canvas.width);
}

}  // namespace stoker
