#include "augment/targets/move_targets.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/kernels/geometry.h"
#include "augment/kernels/pad.h"
#include "augment/kernels/warp.h"

namespace stoker {
namespace {

using Kind = TargetMove::Kind;
using Homography = std::array<double, 9>;  // row-major 3 × 3

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kCrop:
      return "crop";
    case Kind::kResize:
      return "resize";
    case Kind::kHorizontalFlip:
      return "horizontal flip";
    case Kind::kVerticalFlip:
      return "vertical flip";
    case Kind::kPad:
      return "pad";
    case Kind::kAffine:
      return "affine";
    case Kind::kPerspective:
      return "perspective";
    case Kind::kSanitize:
      return "sanitize";
  }
  return "?";
}

Homography Inverse(const Homography& m) {
  const double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7],
               i = m[8];
  const double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const double det = a * A + b * B + c * C;
  return {A / det, -(b * i - c * h) / det, (b * f - c * e) / det,
          B / det, (a * i - c * g) / det,  -(a * f - c * d) / det,
          C / det, -(a * h - b * g) / det, (a * e - b * d) / det};
}

// The map of continuous coordinates (pixel (x, y) spans [x, x + 1)) from the move's input canvas
// to its output canvas, for the kinds that are not special-cased (not resize, not sanitize).
Homography ForwardMap(const TargetMove& move) {
  const double w = move.in_width, h = move.in_height;
  switch (move.kind) {
    case Kind::kCrop:
      return {1, 0, -static_cast<double>(move.left), 0, 1, -static_cast<double>(move.top), 0, 0, 1};
    case Kind::kHorizontalFlip:
      return {-1, 0, w, 0, 1, 0, 0, 0, 1};
    case Kind::kVerticalFlip:
      return {1, 0, 0, 0, -1, h, 0, 0, 1};
    case Kind::kPad:
      return {1, 0, static_cast<double>(move.padding.left),
              0, 1, static_cast<double>(move.padding.top),
              0, 0, 1};
    case Kind::kAffine: {
      // The kernel's matrix maps output to input relative to the centre (w/2, h/2) (v2's
      // center for boxes); invert centre ∘ matrix ∘ uncentre.
      const std::array<double, 6>& m = move.affine;
      const double cx = w / 2, cy = h / 2;
      const Homography to_input = {m[0], m[1], m[2] + cx - m[0] * cx - m[1] * cy,
                                   m[3], m[4], m[5] + cy - m[3] * cx - m[4] * cy,
                                   0,    0,    1};
      return Inverse(to_input);
    }
    case Kind::kPerspective: {
      const std::array<double, 8>& c = move.perspective;
      return Inverse({c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], 1});
    }
    default:
      return {1, 0, 0, 0, 1, 0, 0, 0, 1};
  }
}

std::pair<double, double> MapPoint(const Homography& m, double x, double y) {
  const double z = m[6] * x + m[7] * y + m[8];
  return {(m[0] * x + m[1] * y + m[2]) / z, (m[3] * x + m[4] * y + m[5]) / z};
}

// v2's resize ratios: Python floats made float32 tensors.
std::pair<float, float> ResizeRatios(const TargetMove& move) {
  return {static_cast<float>(static_cast<double>(move.out_width) / move.in_width),
          static_cast<float>(static_cast<double>(move.out_height) / move.in_height)};
}

bool Clamps(Kind kind) {
  return kind == Kind::kCrop || kind == Kind::kAffine || kind == Kind::kPerspective;
}

// v2's RandomIoUCrop: a box whose centre is not strictly inside the crop window is set to
// (0, 0, 0, 0), which the crop then clamps to a degenerate box.
void ZeroBoxesCentredOutside(const TargetMove& move, std::vector<float>* boxes) {
  const float left = move.left, top = move.top;
  const float right = left + move.out_width, bottom = top + move.out_height;
  for (size_t i = 0; i < boxes->size(); i += 4) {
    float* b = &(*boxes)[i];
    const float cx = 0.5f * (b[0] + b[2]), cy = 0.5f * (b[1] + b[3]);
    if (!(left < cx && cx < right && top < cy && cy < bottom)) std::fill(b, b + 4, 0.0f);
  }
}

void MoveBoxes(const TargetMove& move, std::vector<float>* boxes) {
  if (move.zero_boxes_centred_outside) ZeroBoxesCentredOutside(move, boxes);
  if (move.kind == Kind::kResize) {
    const auto [rx, ry] = ResizeRatios(move);
    for (size_t i = 0; i < boxes->size(); i += 2) {
      (*boxes)[i] *= rx;
      (*boxes)[i + 1] *= ry;
    }
    return;
  }
  const Homography map = ForwardMap(move);
  const double max_x = move.out_width, max_y = move.out_height;
  for (size_t i = 0; i < boxes->size(); i += 4) {
    float* b = &(*boxes)[i];
    const double corners[4][2] = {{b[0], b[1]}, {b[2], b[1]}, {b[2], b[3]}, {b[0], b[3]}};
    double lo_x = INFINITY, lo_y = INFINITY, hi_x = -INFINITY, hi_y = -INFINITY;
    for (const auto& corner : corners) {
      const auto [x, y] = MapPoint(map, corner[0], corner[1]);
      lo_x = std::min(lo_x, x);
      hi_x = std::max(hi_x, x);
      lo_y = std::min(lo_y, y);
      hi_y = std::max(hi_y, y);
    }
    if (Clamps(move.kind)) {
      lo_x = std::clamp(lo_x, 0.0, max_x);
      hi_x = std::clamp(hi_x, 0.0, max_x);
      lo_y = std::clamp(lo_y, 0.0, max_y);
      hi_y = std::clamp(hi_y, 0.0, max_y);
    }
    b[0] = static_cast<float>(lo_x);
    b[1] = static_cast<float>(lo_y);
    b[2] = static_cast<float>(hi_x);
    b[3] = static_cast<float>(hi_y);
  }
}

void MoveKeypoints(const TargetMove& move, std::vector<float>* xy) {
  if (move.kind == Kind::kResize) {
    const auto [rx, ry] = ResizeRatios(move);
    for (size_t i = 0; i < xy->size(); i += 2) {
      (*xy)[i] *= rx;
      (*xy)[i + 1] *= ry;
    }
    return;
  }
  // v2 mirrors keypoints about the last pixel, boxes about the canvas edge.
  TargetMove shifted = move;
  if (move.kind == Kind::kHorizontalFlip) shifted.in_width -= 1;
  if (move.kind == Kind::kVerticalFlip) shifted.in_height -= 1;
  const Homography map = ForwardMap(shifted);
  for (size_t i = 0; i < xy->size(); i += 2) {
    const auto [x, y] = MapPoint(map, (*xy)[i], (*xy)[i + 1]);
    (*xy)[i] = static_cast<float>(x);
    (*xy)[i + 1] = static_cast<float>(y);
  }
}

// One mask of `move`'s input into `out` (its output size); `fill` where pixels come from outside.
void MoveMask(const TargetMove& move, float fill, const ImageView& in, const ImageView& out) {
  switch (move.kind) {
    case Kind::kCrop:
      Crop(in, move.top, move.left, out);
      return;
    case Kind::kResize:
      ResizeMaskNearest(in, out);
      return;
    case Kind::kHorizontalFlip:
      HorizontalFlip(in, out);
      return;
    case Kind::kVerticalFlip:
      VerticalFlip(in, out);
      return;
    case Kind::kPad:
      Pad(in, move.padding, move.pad_mode, &fill, out);
      return;
    case Kind::kAffine:
      AffineWarp(in, move.affine, /*bilinear=*/false, &fill, out);
      return;
    case Kind::kPerspective:
      PerspectiveWarp(in, move.perspective, /*bilinear=*/false, &fill, out);
      return;
    case Kind::kSanitize:  // Drops whole masks (Sanitize), never resamples one.
      return;
  }
}

void MoveMasks(const TargetMove& move, uint8_t fill, TargetMasks* masks) {
  const ImageShape in_shape{move.in_height, move.in_width, 1, PixelType::kUint8};
  const ImageShape out_shape{move.out_height, move.out_width, 1, PixelType::kUint8};
  std::vector<uint8_t> moved(out_shape.bytes() * masks->count);
  for (uint32_t i = 0; i < masks->count; ++i) {
    MoveMask(move, fill, ImageView{masks->pixels.data() + in_shape.bytes() * i, in_shape},
             ImageView{moved.data() + out_shape.bytes() * i, out_shape});
  }
  masks->pixels = std::move(moved);
  masks->height = move.out_height;
  masks->width = move.out_width;
}

// Keeps the entries i of `values` (groups of `stride`) where keep[i].
template <typename T>
void KeepEntries(const std::vector<bool>& keep, size_t stride, std::vector<T>* values) {
  size_t kept = 0;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (!keep[i]) continue;
    std::copy_n(values->begin() + i * stride, stride, values->begin() + kept * stride);
    ++kept;
  }
  values->resize(kept * stride);
}

void Sanitize(const TargetMove& move, SampleTargets* targets) {
  if (!targets->boxes) return;
  const std::vector<float>& boxes = *targets->boxes;
  std::vector<bool> keep(targets->box_count());
  for (size_t i = 0; i < keep.size(); ++i) {
    const float* b = &boxes[i * 4];
    keep[i] = b[2] - b[0] >= move.min_size && b[3] - b[1] >= move.min_size && b[0] >= 0 &&
              b[1] >= 0 && b[2] <= move.in_width && b[3] <= move.in_height;
  }
  const size_t kept = std::count(keep.begin(), keep.end(), true);
  KeepEntries(keep, 4, &*targets->boxes);
  if (targets->box_labels) KeepEntries(keep, 1, &*targets->box_labels);
  if (targets->masks) {
    TargetMasks& masks = *targets->masks;
    KeepEntries(keep, size_t{masks.height} * masks.width, &masks.pixels);
    masks.count = static_cast<uint32_t>(kept);
  }
  if (targets->keypoints) {
    TargetKeypoints& k = *targets->keypoints;
    KeepEntries(keep, size_t{k.per_instance} * 2, &k.xy);
    KeepEntries(keep, k.per_instance, &k.visibility);
    k.count = static_cast<uint32_t>(kept);
  }
}

}  // namespace

void ResizeMaskNearest(const ImageView& in, const ImageView& out) {
  const uint32_t in_h = in.shape.height, in_w = in.shape.width;
  const uint32_t out_h = out.shape.height, out_w = out.shape.width;
  // torch's nearest_idx: identity for equal sizes, a shift for exact doubling, else
  // min(floor(i * (float)in / out), in - 1) in float arithmetic.
  auto source = [](uint32_t i, uint32_t in_size, uint32_t out_size) -> uint32_t {
    if (out_size == in_size) return i;
    if (out_size == 2 * in_size) return i >> 1;
    const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
    const auto index = static_cast<uint32_t>(std::floor(static_cast<float>(i) * scale));
    return std::min(index, in_size - 1);
  };
  std::vector<uint32_t> columns(out_w);
  for (uint32_t x = 0; x < out_w; ++x) columns[x] = source(x, in_w, out_w);
  const auto* src = in.pixels<const uint8_t>();
  auto* dst = out.pixels<uint8_t>();
  for (uint32_t y = 0; y < out_h; ++y) {
    const uint8_t* row = src + size_t{source(y, in_h, out_h)} * in_w;
    for (uint32_t x = 0; x < out_w; ++x) dst[size_t{y} * out_w + x] = row[columns[x]];
  }
}

absl::Status MoveTargets(const TargetMoves& moves, SampleTargets* targets) {
  for (size_t i = 0; i < moves.size(); ++i) {
    const TargetMove& move = moves[i];
    if (move.in_height != targets->canvas_height || move.in_width != targets->canvas_width) {
      return absl::InvalidArgumentError(
          absl::StrCat("targets.canvas_size ", targets->canvas_height, "x", targets->canvas_width,
                       " differs from the image's ", move.in_height, "x", move.in_width,
                       " at move ", i, " (", KindName(move.kind), ")"));
    }
    if (move.kind == Kind::kSanitize) {
      Sanitize(move, targets);
      continue;
    }
    if (targets->boxes) MoveBoxes(move, &*targets->boxes);
    if (targets->keypoints) MoveKeypoints(move, &targets->keypoints->xy);
    if (targets->masks) MoveMasks(move, /*fill=*/0, &*targets->masks);
    if (targets->semantic_mask) MoveMasks(move, kSemanticMaskFill, &*targets->semantic_mask);
    targets->canvas_height = move.out_height;
    targets->canvas_width = move.out_width;
  }
  return absl::OkStatus();
}

}  // namespace stoker
