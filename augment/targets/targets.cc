#include "augment/targets/targets.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace stoker {

std::vector<float> BoxesToXyxy(absl::Span<const float> boxes, BoxFormat format) {
  std::vector<float> out(boxes.begin(), boxes.end());
  for (size_t i = 0; i + 3 < out.size(); i += 4) {
    float* b = &out[i];
    if (format == BoxFormat::kXywh) {
      b[2] += b[0];
      b[3] += b[1];
    } else if (format == BoxFormat::kCxcywh) {
      const float cx = b[0], cy = b[1], w = b[2], h = b[3];
      b[0] = cx - w / 2;
      b[1] = cy - h / 2;
      b[2] = cx + w / 2;
      b[3] = cy + h / 2;
    }
  }
  return out;
}

std::vector<float> BoxesFromXyxy(absl::Span<const float> boxes, BoxFormat format) {
  std::vector<float> out(boxes.begin(), boxes.end());
  for (size_t i = 0; i + 3 < out.size(); i += 4) {
    float* b = &out[i];
    const float x1 = b[0], y1 = b[1], x2 = b[2], y2 = b[3];
    if (format == BoxFormat::kXywh) {
      b[2] = x2 - x1;
      b[3] = y2 - y1;
    } else if (format == BoxFormat::kCxcywh) {
      b[0] = (x1 + x2) / 2;
      b[1] = (y1 + y2) / 2;
      b[2] = x2 - x1;
      b[3] = y2 - y1;
    }
  }
  return out;
}

namespace {

absl::Status ValidateBoxes(const std::vector<float>& boxes) {
  if (boxes.size() % 4 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("targets.boxes holds ", boxes.size(), " values, not N x 4"));
  }
  for (size_t i = 0; i < boxes.size(); i += 4) {
    const float* b = &boxes[i];
    for (int k = 0; k < 4; ++k) {
      if (!std::isfinite(b[k])) {
        return absl::InvalidArgumentError(
            absl::StrCat("targets.boxes[", i / 4, "] has a NaN or infinite coordinate"));
      }
    }
    if (b[2] < b[0] || b[3] < b[1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("targets.boxes[", i / 4, "] has x2 < x1 or y2 < y1 (boxes are XYXY here)"));
    }
  }
  return absl::OkStatus();
}

// `masks` (named `field` in errors) of the canvas's size, their pixels count × height × width.
absl::Status ValidateMaskPlanes(const TargetMasks& masks, const SampleTargets& targets,
                                absl::string_view field) {
  if (masks.height != targets.canvas_height || masks.width != targets.canvas_width) {
    return absl::InvalidArgumentError(
        absl::StrCat("targets.", field, " are ", masks.height, "x", masks.width, ", the canvas is ",
                     targets.canvas_height, "x", targets.canvas_width));
  }
  if (masks.pixels.size() != size_t{masks.count} * masks.height * masks.width) {
    return absl::InvalidArgumentError(absl::StrCat(
        "targets.", field, " hold ", masks.pixels.size(), " bytes, not count x height x width = ",
        masks.count, " x ", masks.height, " x ", masks.width));
  }
  return absl::OkStatus();
}

absl::Status ValidateMasks(const TargetMasks& masks, const SampleTargets& targets) {
  if (absl::Status s = ValidateMaskPlanes(masks, targets, "masks"); !s.ok()) return s;
  if (targets.boxes && masks.count != targets.box_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "targets.masks hold ", masks.count, " instance masks for ", targets.box_count(), " boxes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateKeypoints(const TargetKeypoints& k, const SampleTargets& targets) {
  const size_t points = size_t{k.count} * k.per_instance;
  if (k.xy.size() != points * 2 || k.visibility.size() != points) {
    return absl::InvalidArgumentError(
        absl::StrCat("targets.keypoints hold ", k.xy.size(), " coordinates and ",
                     k.visibility.size(), " visibility flags, not count x per_instance (", k.count,
                     " x ", k.per_instance, ") x 2 and x 1"));
  }
  for (size_t i = 0; i < k.xy.size(); ++i) {
    if (!std::isfinite(k.xy[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("targets.keypoints[", i / 2, "] has a NaN or infinite coordinate"));
    }
  }
  if (targets.boxes && k.count != targets.box_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "targets.keypoints have ", k.count, " instances for ", targets.box_count(), " boxes"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateTargets(const SampleTargets& targets) {
  if (targets.canvas_height == 0 || targets.canvas_width == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "targets.canvas_size must be > 0, got ", targets.canvas_height, "x", targets.canvas_width));
  }
  if (targets.boxes) {
    if (absl::Status s = ValidateBoxes(*targets.boxes); !s.ok()) return s;
  }
  if (targets.box_labels) {
    if (!targets.boxes) return absl::InvalidArgumentError("targets.box_labels without boxes");
    if (targets.box_labels->size() != targets.box_count()) {
      return absl::InvalidArgumentError(absl::StrCat("targets.box_labels has ",
                                                     targets.box_labels->size(), " entries for ",
                                                     targets.box_count(), " boxes"));
    }
  }
  if (targets.masks) {
    if (absl::Status s = ValidateMasks(*targets.masks, targets); !s.ok()) return s;
  }
  if (targets.semantic_mask) {
    const TargetMasks& semantic = *targets.semantic_mask;
    if (semantic.count != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("targets.semantic_mask is ", semantic.count, " masks, not one"));
    }
    if (absl::Status s = ValidateMaskPlanes(semantic, targets, "semantic_mask"); !s.ok()) {
      return s;
    }
  }
  if (targets.keypoints) {
    if (absl::Status s = ValidateKeypoints(*targets.keypoints, targets); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace stoker
