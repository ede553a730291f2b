#ifndef STOKER_AUGMENT_KERNELS_NORMALIZE_H_
#define STOKER_AUGMENT_KERNELS_NORMALIZE_H_

// Per-channel normalization of float32 HWC images: (x - mean[c]) / std[c], computed as
// (x - mean[c]) * inv_std[c] with inv_std precomputed. The per-channel constants come expanded
// to one image row (element i of a row belongs to channel i % C), so the kernel is a contiguous,
// vectorizable loop for any channel count. Pure functions: no allocation, thread-safe on distinct
// outputs.

#include <cstdint>

#include "image/image.h"

namespace stoker {

// row[x * channels + c] = per_channel[c] for x in [0, width).
// REQUIRES: `row` holds width * channels floats; per_channel holds `channels` floats.
void RepeatPerChannel(const float* per_channel, uint32_t channels, uint32_t width, float* row);

// out = (in - mean_row) * inv_std_row, row by row.
// REQUIRES: in.shape.type == kFloat32; out.shape == in.shape; `out` is either exactly `in`
//   (in place) or does not overlap it; mean_row and inv_std_row hold width * channels floats
//   (see RepeatPerChannel).
void Normalize(const ImageView& in, const float* mean_row, const float* inv_std_row,
               const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_NORMALIZE_H_
