#include "augment/kernels/pad.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace stoker {
namespace {

// The source index of padded coordinate i (relative to the image, so 0..n-1 is inside), or -1
// for a constant fill.
int64_t SourceIndex(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * n - 2;
      int64_t j = ((i % period) + period) % period;
      return j < n ? j : period - j;
    }
    case PadMode::kSymmetric: {
      const int64_t period = 2 * n;
      int64_t j = ((i % period) + period) % period;
      return j < n ? j : period - 1 - j;
    }
  }
  return -1;
}

// Through both paddings: the index in the image padded once, then in the image; -1: fill.
int64_t TwiceSourceIndex(int64_t i, uint32_t then_before, uint32_t before, int64_t n,
                         int64_t n_padded, PadMode mode) {
  const int64_t j = SourceIndex(i - then_before, n_padded, mode);
  return j < 0 ? -1 : SourceIndex(j - before, n, mode);
}

}  // namespace

void Pad(const ImageView& in, const Padding& padding, PadMode mode, const float* fill,
         const ImageView& out, const Padding& then) {
  const size_t channels = in.shape.channels;
  const size_t value_bytes = PixelTypeSize(in.shape.type);
  const size_t pixel_bytes = channels * value_bytes;
  uint8_t fill_pixel[16 * 4];
  for (size_t c = 0; c < channels; ++c) {
    if (in.shape.type == PixelType::kUint8) {
      fill_pixel[c] = static_cast<uint8_t>(std::clamp(fill[c], 0.0f, 255.0f));
    } else {
      std::memcpy(fill_pixel + c * 4, &fill[c], 4);
    }
  }
  const uint8_t* src = in.pixels<const uint8_t>();
  uint8_t* dst = out.pixels<uint8_t>();
  const int64_t in_h = in.shape.height, in_w = in.shape.width;
  const ImageShape once = PaddedShape(in.shape, padding);
  const size_t in_row = static_cast<size_t>(in_w) * pixel_bytes;
  for (uint32_t y = 0; y < out.shape.height; ++y) {
    const int64_t sy = TwiceSourceIndex(y, then.top, padding.top, in_h, once.height, mode);
    for (uint32_t x = 0; x < out.shape.width; ++x) {
      const int64_t sx = TwiceSourceIndex(x, then.left, padding.left, in_w, once.width, mode);
      const uint8_t* from = (sy < 0 || sx < 0) ? fill_pixel : src + sy * in_row + sx * pixel_bytes;
      std::memcpy(dst, from, pixel_bytes);
      dst += pixel_bytes;
    }
  }
}

}  // namespace stoker
