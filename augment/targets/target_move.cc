#include "augment/targets/target_move.h"

namespace stoker {
namespace {

TargetMove Move(TargetMove::Kind kind, uint32_t in_height, uint32_t in_width, uint32_t out_height,
                uint32_t out_width) {
  TargetMove move;
  move.kind = kind;
  move.in_height = in_height;
  move.in_width = in_width;
  move.out_height = out_height;
  move.out_width = out_width;
  return move;
}

}  // namespace

TargetMove CropMove(uint32_t in_height, uint32_t in_width, uint32_t top, uint32_t left,
                    uint32_t height, uint32_t width) {
  TargetMove move = Move(TargetMove::Kind::kCrop, in_height, in_width, height, width);
  move.top = top;
  move.left = left;
  return move;
}

TargetMove IouCropMove(uint32_t in_height, uint32_t in_width, uint32_t top, uint32_t left,
                       uint32_t height, uint32_t width) {
  TargetMove move = CropMove(in_height, in_width, top, left, height, width);
  move.zero_boxes_centred_outside = true;
  return move;
}

TargetMove ResizeMove(uint32_t in_height, uint32_t in_width, uint32_t height, uint32_t width) {
  return Move(TargetMove::Kind::kResize, in_height, in_width, height, width);
}

TargetMove FlipMove(bool horizontal, uint32_t in_height, uint32_t in_width) {
  return Move(horizontal ? TargetMove::Kind::kHorizontalFlip : TargetMove::Kind::kVerticalFlip,
              in_height, in_width, in_height, in_width);
}

TargetMove PadMove(uint32_t in_height, uint32_t in_width, const Padding& padding, PadMode mode) {
  TargetMove move =
      Move(TargetMove::Kind::kPad, in_height, in_width, in_height + padding.top + padding.bottom,
           in_width + padding.left + padding.right);
  move.padding = padding;
  move.pad_mode = mode;
  return move;
}

TargetMove AffineMove(uint32_t in_height, uint32_t in_width, const std::array<double, 6>& matrix) {
  TargetMove move = Move(TargetMove::Kind::kAffine, in_height, in_width, in_height, in_width);
  move.affine = matrix;
  return move;
}

TargetMove PerspectiveMove(uint32_t in_height, uint32_t in_width,
                           const std::array<double, 8>& coefficients) {
  TargetMove move = Move(TargetMove::Kind::kPerspective, in_height, in_width, in_height, in_width);
  move.perspective = coefficients;
  return move;
}

TargetMove SanitizeMove(uint32_t in_height, uint32_t in_width, float min_size) {
  TargetMove move = Move(TargetMove::Kind::kSanitize, in_height, in_width, in_height, in_width);
  move.min_size = min_size;
  return move;
}

}  // namespace stoker
