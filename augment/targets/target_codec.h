#ifndef STOKER_AUGMENT_TARGETS_TARGET_CODEC_H_
#define STOKER_AUGMENT_TARGETS_TARGET_CODEC_H_

// The bytes of a sample's typed targets (targets.h) under their field names ("boxes",
// "box_labels", "masks", "keypoints", "semantic_mask"; common/target_fields.h), in two forms, all
// little-endian:
//
// Stored (a stoker shard record's fields, data/record_fields.h; written by stoker-pack --coco),
// in pixels of the stored image, whose decoded size is the canvas:
//   boxes       float32 x1 y1 x2 y2, N times (XYXY)
//   box_labels  int64, N times
//   masks       u32 count | u32 height | u32 width | per mask: u32 run_count | u32 runs...
//               row-major run lengths alternating 0s and 1s, starting with 0s (a mask starting
//               with a 1 has a first run of 0); the runs of a mask sum to height × width
//   keypoints   u32 count | u32 per_instance | float32 x y, count × per_instance times |
//               u8 visibility, count × per_instance times
//   semantic_mask  the label map's PNG file as it is (8-bit gray or palette, the index the
//               label; a WebDataset's .seg.png), the image's size
//
// On the wire (a batch's field columns, BatchHeader.fields), in pixels of the output image:
//   boxes       float32 N × 4, XYXY
//   box_labels  int64 N
//   masks       uint8 N × H × W (H × W the batch's image size), one byte a pixel, 0 or 1
//   keypoints   u32 per_instance | float32 N × per_instance × 3 (x, y, visibility)
//   semantic_mask  uint8 H × W, the class ids; kSemanticMaskFill (255) where the ops brought in
//               pixels from outside the image
//
// Thread-safe functions.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "augment/targets/targets.h"
#include "common/target_fields.h"

namespace stoker {

// The stored values of `targets` (boxes, box_labels, masks, keypoints: those it has), as
// (field name, bytes) pairs. Boxes are stored as they are (XYXY pixels of the canvas).
// INVALID_ARGUMENT from ValidateTargets, or naming the field when it holds more than
// kMaxTargetInstances instances; a semantic mask is refused (the packer stores its PNG file).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> EncodeStoredTargets(
    const SampleTargets& targets);

// The stored values of one sample, each absent when the record lacks the field.
struct StoredTargetValues {
  std::optional<absl::Span<const uint8_t>> boxes;
  std::optional<absl::Span<const uint8_t>> box_labels;
  std::optional<absl::Span<const uint8_t>> masks;
  std::optional<absl::Span<const uint8_t>> keypoints;
  std::optional<absl::Span<const uint8_t>> semantic_mask;
};

// The targets of a sample whose image decodes to canvas_height × canvas_width, from its stored
// values. A bad-sample error (common/bad_sample.h) naming the field when they cannot be used:
// kBadAnnotation for bytes that do not parse (a length that is not a whole number of values,
// runs that do not sum to the mask's size), masks of another size than the canvas, a semantic
// mask that is not an 8-bit gray or palette PNG of the canvas's size, and anything
// ValidateTargets refuses (a box outside the canvas, labels not one per box, ...); kTooLarge for
// more than kMaxTargetInstances instances or kMaxKeypointsPerInstance keypoints.
absl::StatusOr<SampleTargets> DecodeStoredTargets(const StoredTargetValues& values,
                                                  uint32_t canvas_height, uint32_t canvas_width);

// Appends the wire value of target `field` of `targets` (moved to the output image) to `out`;
// nothing when `targets` lacks it. REQUIRES: IsTargetField(field).
void AppendWireTarget(absl::string_view field, const SampleTargets& targets, std::string* out);

// Row-major run lengths of a 0/1 mask (any nonzero byte counts as 1), alternating, starting
// with 0s; and the mask back from runs (INVALID_ARGUMENT when the runs do not sum to
// mask.size()).
std::vector<uint32_t> MaskToRuns(absl::Span<const uint8_t> mask);
absl::Status RunsToMask(absl::Span<const uint32_t> runs, absl::Span<uint8_t> mask);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TARGETS_TARGET_CODEC_H_
