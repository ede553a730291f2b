#include "augment/kernels/to_float.h"

#include <cstddef>
#include <cstdint>

namespace stoker {

void ToFloat(const ImageView& in, const ImageView& out) {
  const uint8_t* __restrict src = in.pixels<const uint8_t>();
  float* __restrict dst = out.pixels<float>();
  const size_t n = in.shape.elements();
  for (size_t i = 0; i < n; ++i) dst[i] = ToFloatValue(src[i]);
}

}  // namespace stoker
