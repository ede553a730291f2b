#ifndef STOKER_AUGMENT_KERNELS_PAD_H_
#define STOKER_AUGMENT_KERNELS_PAD_H_

// Padding an image on its four sides, with torchvision's padding modes (F.pad):
//
//   kConstant   the fill value, per channel
//   kEdge       the nearest edge pixel repeated
//   kReflect    mirrored without repeating the edge (... c b | a b c | b a ...)
//   kSymmetric  mirrored with the edge repeated     (... b a | a b c | c b ...)
//
// Padding wider than the image keeps folding (numpy's semantics; torchvision's tensor path
// refuses reflect padding >= the size). Any pixel type. Pure function: no allocation,
// thread-safe on distinct outputs.

#include <cstdint>

#include "image/image.h"

namespace stoker {

enum class PadMode { kConstant = 0, kEdge = 1, kReflect = 2, kSymmetric = 3 };

struct Padding {
  uint32_t left = 0;
  uint32_t top = 0;
  uint32_t right = 0;
  uint32_t bottom = 0;
};

// The padded size of `in`.
inline ImageShape PaddedShape(const ImageShape& in, const Padding& p) {
  return ImageShape{in.height + p.top + p.bottom, in.width + p.left + p.right, in.channels,
                    in.type};
}

// Writes `in` padded by `padding`, and the result padded again by `then` (for reflect and
// symmetric not the same as padding once by the sum: the second pass mirrors the padded image),
// to `out`. `fill` holds one value per channel (used by kConstant), in the image's units
// (0..255 for uint8).
// REQUIRES: out.shape == PaddedShape(PaddedShape(in.shape, padding), then);
//   in.shape.channels <= 16; `in` and `out` do not overlap.
void Pad(const ImageView& in, const Padding& padding, PadMode mode, const float* fill,
         const ImageView& out, const Padding& then = Padding{});

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_PAD_H_
