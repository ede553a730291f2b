#ifndef STOKER_AUGMENT_KERNELS_TONE_H_
#define STOKER_AUGMENT_KERNELS_TONE_H_

// Kernels that remap pixel values, as torchvision.transforms.functional does on tensors: invert,
// posterize, solarize, autocontrast. uint8 values span 0..255, float32 values 0..1. Pure
// functions: no allocation; `out` may be exactly `in` (in place) or must not overlap it.
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

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_TONE_H_
