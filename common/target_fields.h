#ifndef STOKER_COMMON_TARGET_FIELDS_H_
#define STOKER_COMMON_TARGET_FIELDS_H_

// The names and wire bounds of a sample's typed targets: the fields the worker moves with the
// image (augment/targets/target_codec.h has their stored and wire bytes). Shared by the worker
// that fills their columns, the data layer that reads them and the client that checks them.

#include <cstdint>

#include "absl/strings/string_view.h"

namespace stoker {

inline constexpr absl::string_view kBoxesField = "boxes";
inline constexpr absl::string_view kBoxLabelsField = "box_labels";
inline constexpr absl::string_view kMasksField = "masks";
inline constexpr absl::string_view kKeypointsField = "keypoints";
// One H × W label map per sample (semantic segmentation), stored as the PNG file itself; read
// from a WebDataset's ".seg.png" (data/sample_fields.h).
inline constexpr absl::string_view kSemanticMaskField = "semantic_mask";

// The most boxes, masks or keypoint instances one sample may carry: more is a bad sample
// (too_large). It bounds what a sample's masks make a worker hold: kMaxTargetInstances × H × W
// bytes of the output image.
inline constexpr uint32_t kMaxTargetInstances = 128;
// The most keypoints per instance.
inline constexpr uint32_t kMaxKeypointsPerInstance = 64;
// The most bytes a sample's instance masks may take at its stored image's size, one byte a pixel
// (count × height × width): the packer refuses more, and a worker, which unpacks them before the
// ops move them, treats more as a bad sample (too_large). 256 MiB holds 128 masks of a 2-megapixel
// photograph; COCO's largest images need a sixth of that.
inline constexpr uint64_t kMaxSampleMaskBytes = uint64_t{256} << 20;

// Wire bytes per value: a box (float32 XYXY), a box label (int64), a keypoint (float32 x, y,
// visibility), and the keypoints value's leading u32 keypoints per instance.
inline constexpr uint64_t kWireBoxBytes = 16;
inline constexpr uint64_t kWireBoxLabelBytes = 8;
inline constexpr uint64_t kWireKeypointBytes = 12;
inline constexpr uint64_t kWireKeypointsPrefixBytes = 4;

// True for "boxes", "box_labels", "masks", "keypoints" and "semantic_mask".
inline bool IsTargetField(absl::string_view field) {
  return field == kBoxesField || field == kBoxLabelsField || field == kMasksField ||
         field == kKeypointsField || field == kSemanticMaskField;
}

// The most bytes the wire value of target `field` can hold for one sample whose output image has
// `image_pixels` pixels (height × width): kMaxTargetInstances instances, one semantic mask.
// REQUIRES: IsTargetField(field).
inline uint64_t MaxWireTargetBytes(absl::string_view field, uint64_t image_pixels) {
  if (field == kBoxesField) return uint64_t{kMaxTargetInstances} * kWireBoxBytes;
  if (field == kBoxLabelsField) return uint64_t{kMaxTargetInstances} * kWireBoxLabelBytes;
  if (field == kMasksField) return uint64_t{kMaxTargetInstances} * image_pixels;
  if (field == kSemanticMaskField) return image_pixels;
  return kWireKeypointsPrefixBytes +
         uint64_t{kMaxTargetInstances} * kMaxKeypointsPerInstance * kWireKeypointBytes;
}

}  // namespace stoker

#endif  // STOKER_COMMON_TARGET_FIELDS_H_
