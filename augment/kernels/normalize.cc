#include "augment/kernels/normalize.h"

#include <cstddef>

namespace stoker {

void RepeatPerChannel(const float* per_channel, uint32_t channels, uint32_t width, float* row) {
  for (uint32_t x = 0; x < width; ++x) {
    for (uint32_t c = 0; c < channels; ++c) row[size_t{x} * channels + c] = per_channel[c];
  }
}

void Normalize(const ImageView& in, const float* mean_row, const float* inv_std_row,
               const ImageView& out) {
  const size_t row_elems = size_t{in.shape.width} * in.shape.channels;
  const float* __restrict mean = mean_row;
  const float* __restrict inv_std = inv_std_row;
  for (uint32_t y = 0; y < in.shape.height; ++y) {
    const float* src = in.pixels<const float>() + y * row_elems;
    float* dst = out.pixels<float>() + y * row_elems;
    if (src == dst) {
      // One pointer, so the compiler sees each element read before it is written.
      for (size_t i = 0; i < row_elems; ++i) dst[i] = (dst[i] - mean[i]) * inv_std[i];
    } else {
      const float* __restrict s = src;
      float* __restrict d = dst;
      for (size_t i = 0; i < row_elems; ++i) d[i] = (s[i] - mean[i]) * inv_std[i];
    }
  }
}

}  // namespace stoker
