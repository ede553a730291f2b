#ifndef STOKER_AUGMENT_TARGETS_TARGETS_H_
#define STOKER_AUGMENT_TARGETS_TARGETS_H_

// The typed targets of one sample that geometric ops move together with its image, as
// torchvision.transforms.v2 moves tv_tensors.BoundingBoxes, Mask and KeyPoints: boxes with
// their labels, masks, keypoints; each optional. Coordinates are in pixels of the image they
// belong to (the canvas): a box spans the continuous interval [x1, x2) × [y1, y2), so the box
// of pixel (x, y) is (x, y, x + 1, y + 1); a keypoint is a pixel position.
//
// Boxes are always XYXY here; BoxesToXyxy / BoxesFromXyxy convert from and to torchvision's
// other BoundingBoxFormats at the edges (a dataset's format, the wire).

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace stoker {

// torchvision's BoundingBoxFormat (axis-aligned ones).
enum class BoxFormat {
  kXyxy,    // x1, y1, x2, y2
  kXywh,    // x1, y1, width, height
  kCxcywh,  // centre x, centre y, width, height
};

// `boxes` (N × 4 values in `format`) as XYXY. REQUIRES: boxes.size() % 4 == 0.
std::vector<float> BoxesToXyxy(absl::Span<const float> boxes, BoxFormat format);
// XYXY `boxes` in `format`. REQUIRES: boxes.size() % 4 == 0.
std::vector<float> BoxesFromXyxy(absl::Span<const float> boxes, BoxFormat format);

// N masks of height × width, row-major, one byte a pixel: N instance masks (one per box), or
// one semantic mask of class ids (N == 1, not tied to the boxes).
struct TargetMasks {
  uint32_t count = 0;
  uint32_t height = 0;
  uint32_t width = 0;
  std::vector<uint8_t> pixels;  // count × height × width
};

// The class id a semantic mask gets where a move brings in pixels from outside the image (pad in
// constant mode, affine and perspective warps): 255, "ignore", the fill of torchvision's
// segmentation references ({tv_tensors.Mask: 255}) and the ignore_index their loss skips, so
// that made-up pixels do not train as class 0. v2's own default for masks is 0, which instance
// masks keep (0 is "not this object" there). A dataset's label 255 therefore means "ignore".
inline constexpr uint8_t kSemanticMaskFill = 255;

// N instances of K keypoints each: (x, y) per keypoint and a visibility flag (COCO's 0, 1, 2),
// which the ops carry unchanged.
struct TargetKeypoints {
  uint32_t count = 0;
  uint32_t per_instance = 0;
  std::vector<float> xy;            // count × per_instance × 2
  std::vector<uint8_t> visibility;  // count × per_instance
};

// One sample's targets. Thread-compatible value type.
struct SampleTargets {
  // The size of the image the coordinates and masks belong to.
  uint32_t canvas_height = 0;
  uint32_t canvas_width = 0;
  std::optional<std::vector<float>> boxes;         // N × 4, XYXY pixels
  std::optional<std::vector<int64_t>> box_labels;  // N, one per box
  std::optional<TargetMasks> masks;                // instance masks
  std::optional<TargetMasks> semantic_mask;        // one label map (count 1)
  std::optional<TargetKeypoints> keypoints;

  // Number of boxes (0 without boxes).
  size_t box_count() const { return boxes ? boxes->size() / 4 : 0; }
};

// Checks `targets` before any op uses them. Errors: INVALID_ARGUMENT naming the field:
// "targets.canvas_size must be > 0", "targets.boxes holds 7 values, not N x 4",
// "targets.boxes[2] has a NaN or infinite coordinate", "targets.boxes[2] has x2 < x1",
// "targets.box_labels has 3 entries for 2 boxes", "targets.masks are 10x20, the canvas is
// 20x20", "targets.masks hold 3 instance masks for 2 boxes", "targets.semantic_mask is 2 masks,
// not one", "targets.keypoints ...".
absl::Status ValidateTargets(const SampleTargets& targets);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TARGETS_TARGETS_H_
