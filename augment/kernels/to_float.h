#ifndef STOKER_AUGMENT_KERNELS_TO_FLOAT_H_
#define STOKER_AUGMENT_KERNELS_TO_FLOAT_H_

// uint8 → float32 scaled to [0, 1], layout kept (torchvision ToTensor's scaling, without its
// HWC → CHW change). Pure function: no allocation, thread-safe on distinct outputs.

#include "image/image.h"

namespace stoker {

// out[i] = in[i] / 255.0f.
// REQUIRES: in.shape.type == kUint8; out has in's height, width and channels and type kFloat32;
//   `in` and `out` do not overlap.
void ToFloat(const ImageView& in, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_TO_FLOAT_H_
