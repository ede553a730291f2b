#ifndef STOKER_AUGMENT_KERNELS_TONE_H_
#define STOKER_AUGMENT_KERNELS_TONE_H_

// Kernels that remap pixel values, as torchvision.transforms.functional does on tensors: invert,
// posterize, solarize, autocontrast, equalize, adjust_sharpness. uint8 values span 0..255,
// float32 values 0..1. Pure functions: no allocation; `out` may be exactly `in` (in place) or
// must not overlap it, except where said.
//
// REQUIRES for all: out.shape == in.shape.

#include <cstdint>

#include "image/image.h"

namespace stoker {

// 255 - x (uint8), 1 - x (float32).
void Invert(const ImageView& in, const ImageView& out);

// x & ~(2^(8 - bits) - 1): keeps the top `bits` bits. REQUIRES: uint8; bits <= 8.
void Posterize(const ImageView& in, uint32_t bits, const ImageView& out);

// x >= threshold ? inverted x : x.
void Solarize(const ImageView& in, float threshold, const ImageView& out);

// Per channel: (x - min) * (bound / (max - min)), clamped to [0, bound] (bound 255 or 1) and, for
// uint8, truncated toward zero (torchvision computes in float32 and casts); a constant channel
// is left as it is.
void Autocontrast(const ImageView& in, const ImageView& out);

// Histogram equalization per channel, torchvision's (and PIL's ImageOps.equalize) lookup table:
// step = (pixels - count of the highest value present) / 255 (floor); step 0 leaves the channel
// as it is; else lut[v] = min(255, (pixels below v + step / 2) / step). REQUIRES: uint8.
void Equalize(const ImageView& in, const ImageView& out);

// torchvision adjust_sharpness: blends the image with its smoothed copy (3x3 kernel
// [1 1 1; 1 5 1; 1 1 1] / 13 on interior pixels, rounded half to even for uint8; the border
// row and column keep their values): factor * x + (1 - factor) * smooth, clamped to the range,
// uint8 truncated. Images of height or width <= 2 are copied. REQUIRES: `out` does not overlap
// `in` (not in place).
void AdjustSharpness(const ImageView& in, float factor, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_TONE_H_
