#ifndef STOKER_AUGMENT_KERNELS_RESIZE_ANTIALIAS_H_
#define STOKER_AUGMENT_KERNELS_RESIZE_ANTIALIAS_H_

// PIL's bilinear resampling (Pillow's Resample.c, which torchvision uses for PIL images and
// mirrors with antialias=True on tensors): a separable triangle filter whose support widens with
// the shrink factor (so shrinking averages, i.e. antialiases), horizontal pass first. For uint8
// it is PIL's arithmetic exactly — weights normalized in double, rounded to 22-bit fixed point,
// the horizontal pass rounded and clipped to uint8 before the vertical one — so the output
// equals PIL's Image.resize(..., BILINEAR) byte for byte. float32 uses the same weights without
// rounding (torchvision's antialiased tensor path, up to float summation order). uint8 runs the
// best build this CPU has (resize_antialias_variants.h: AVX-512, AVX2 or portable), all of them
// giving the same bytes.
//
// Buffers (weights, the intermediate image) are thread-local and only grow, so steady state
// does not allocate. Thread-safe on distinct outputs.

#include "augment/kernels/resize.h"
#include "image/image.h"

namespace stoker {

// Resamples `region` of `in` to the whole of `out` (as PIL's crop(region).resize(out size)).
// REQUIRES: out has in's type and channels; region is non-empty and inside `in`; `in` and `out`
//   do not overlap.
void ResizeAntialiased(const ImageView& in, const PixelRect& region, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_RESIZE_ANTIALIAS_H_
