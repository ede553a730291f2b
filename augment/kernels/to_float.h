#ifndef STOKER_AUGMENT_KERNELS_TO_FLOAT_H_
#define STOKER_AUGMENT_KERNELS_TO_FLOAT_H_

// uint8 → float32 scaled to [0, 1], layout kept (torchvision ToTensor's scaling, without its
// HWC → CHW change). Pure function: no allocation, thread-safe on distinct outputs.

#include <cstdint>

#include "image/image.h"

namespace stoker {

// One element of ToFloat: a division, not a multiplication by 1/255 (which differs for 126 of
// the 256 values), to match torchvision bit for bit. Also used by the fused blur chain
// (gaussian_blur.h), which converts row by row.
inline float ToFloatValue(uint8_t v) { return static_cast<float>(v) / 255.0f; }

// out[i] = ToFloatValue(in[i]).
// REQUIRES: in.shape.type == kUint8; out has in's height, width and channels and type kFloat32;
//   `in` and `out` do not overlap.
void ToFloat(const ImageView& in, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_TO_FLOAT_H_
