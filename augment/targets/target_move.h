#ifndef STOKER_AUGMENT_TARGETS_TARGET_MOVE_H_
#define STOKER_AUGMENT_TARGETS_TARGET_MOVE_H_

// What a geometric op did to its image, described well enough to do the same to the image's
// targets (augment/targets/targets.h): a crop window, a resize from one size to another, a flip,
// a padding, an affine or perspective warp with its output size, or a sanitize step. An op
// reports the moves it applied (Op::DrawTargetMoves, augment/op.h), making the same draws as its
// Apply; the pipeline collects them in order and MoveTargets (move_targets.h) applies them as
// torchvision.transforms.v2's kernels do.
//
// Each move knows the canvas it starts from and the one it produces, so a list of moves can be
// checked against the image sizes the pipeline saw.

#include <array>
#include <cstdint>
#include <vector>

#include "augment/kernels/pad.h"

namespace stoker {

struct TargetMove {
  enum class Kind {
    kCrop,            // The window (top, left) of out size; always inside the input here.
    kResize,          // The whole canvas resampled to out size.
    kHorizontalFlip,  // Mirrored left-right.
    kVerticalFlip,    // Mirrored top-bottom.
    kPad,             // `padding` added in `pad_mode` (masks only care about the mode).
    kAffine,          // The warp kernel's `affine` matrix (augment/kernels/warp.h: output to
                      // input, about the canvas centre), same size out.
    kPerspective,     // The warp kernel's `perspective` coefficients (output to input), same
                      // size out.
    kSanitize,        // Not geometric: drop boxes narrower or lower than `min_size` (v2's
                      // SanitizeBoundingBoxes) with their labels, masks and keypoints.
  };
  Kind kind = Kind::kCrop;
  uint32_t in_height = 0;
  uint32_t in_width = 0;
  uint32_t out_height = 0;
  uint32_t out_width = 0;
  uint32_t top = 0;   // kCrop
  uint32_t left = 0;  // kCrop
  Padding padding;    // kPad
  PadMode pad_mode = PadMode::kConstant;
  std::array<double, 6> affine{};       // kAffine
  std::array<double, 8> perspective{};  // kPerspective
  float min_size = 1;                   // kSanitize
  // kCrop of v2's RandomIoUCrop: boxes whose centre is not strictly inside the window become
  // (0, 0, 0, 0) before the crop (degenerate, so a later sanitize drops them).
  bool zero_boxes_centred_outside = false;
};

using TargetMoves = std::vector<TargetMove>;

// The moves of the ops, each from an input canvas of in_height × in_width.
TargetMove CropMove(uint32_t in_height, uint32_t in_width, uint32_t top, uint32_t left,
                    uint32_t height, uint32_t width);
// CropMove with zero_boxes_centred_outside (random_iou_crop).
TargetMove IouCropMove(uint32_t in_height, uint32_t in_width, uint32_t top, uint32_t left,
                       uint32_t height, uint32_t width);
TargetMove ResizeMove(uint32_t in_height, uint32_t in_width, uint32_t height, uint32_t width);
TargetMove FlipMove(bool horizontal, uint32_t in_height, uint32_t in_width);
TargetMove PadMove(uint32_t in_height, uint32_t in_width, const Padding& padding, PadMode mode);
TargetMove AffineMove(uint32_t in_height, uint32_t in_width, const std::array<double, 6>& matrix);
TargetMove PerspectiveMove(uint32_t in_height, uint32_t in_width,
                           const std::array<double, 8>& coefficients);
TargetMove SanitizeMove(uint32_t in_height, uint32_t in_width, float min_size);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TARGETS_TARGET_MOVE_H_
