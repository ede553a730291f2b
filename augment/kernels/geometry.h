#ifndef STOKER_AUGMENT_KERNELS_GEOMETRY_H_
#define STOKER_AUGMENT_KERNELS_GEOMETRY_H_

// Kernels that move whole pixels without looking at their values, so they work for any pixel
// type and channel count: cropping and mirroring. Pure functions: no allocation, thread-safe on
// distinct outputs.

#include <cstdint>

#include "image/image.h"

namespace stoker {

// Copies the out.shape.height × out.shape.width window of `in` whose top-left pixel is
// (top, left) into `out`.
// REQUIRES: out has in's type and channels; top + out.height <= in.height;
//   left + out.width <= in.width; `in` and `out` do not overlap.
void Crop(const ImageView& in, uint32_t top, uint32_t left, const ImageView& out);

// Mirrors `in` left-right into `out`: out(y, x) = in(y, W-1-x).
// REQUIRES: out.shape == in.shape; `out` is either exactly `in` (in place) or does not overlap it.
void HorizontalFlip(const ImageView& in, const ImageView& out);

// Mirrors `in` top-bottom into `out`: out(y, x) = in(H-1-y, x) (torchvision vflip).
// REQUIRES: out.shape == in.shape; `out` is either exactly `in` (in place) or does not overlap it.
void VerticalFlip(const ImageView& in, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GEOMETRY_H_
