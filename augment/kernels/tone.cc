#include "augment/kernels/tone.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "augment/kernels/pixel_loops.h"

namespace stoker {
namespace {

// Applies `f` to every value of `in` (as T), writing `out`.
template <typename T, typename F>
void Remap(const ImageView& in, const ImageView& out, F f) {
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  const size_t n = in.shape.elements();
  for (size_t i = 0; i < n; ++i) dst[i] = f(src[i]);
}

// Any type and channel count (uint8 with 1 or 3 channels has the vectorized loops).
template <typename T>
void AutocontrastTyped(const ImageView& in, const ImageView& out, float bound) {
  const uint32_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  for (uint32_t c = 0; c < channels; ++c) {
    T low = src[c], high = src[c];
    for (size_t i = 0; i < pixels; ++i) {
      low = std::min(low, src[i * channels + c]);
      high = std::max(high, src[i * channels + c]);
    }
    const float minimum = static_cast<float>(low);
    const float scale = high == low ? 1.0f : bound / (static_cast<float>(high) - minimum);
    const float offset = high == low ? 0.0f : minimum;
    for (size_t i = 0; i < pixels; ++i) {
      const float v = (static_cast<float>(src[i * channels + c]) - offset) * scale;
      dst[i * channels + c] = static_cast<T>(std::clamp(v, 0.0f, bound));
    }
  }
}

// The float32 path (uint8 has the vectorized loop, pixel_loops.h, with the same arithmetic and
// the smoothed value rounded half to even, as torch.round).
float Smoothed(const float* p, size_t row, size_t channels) {
  // Interior pixel p: the 3x3 neighbourhood, centre weight 5, others 1, over 13 (float32
  // weights, as torchvision's kernel tensor).
  constexpr float kSide = 1.0f / 13.0f, kCentre = 5.0f / 13.0f;
  float sum = 0.0f;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) {
      const float v = p[dy * static_cast<ptrdiff_t>(row) + dx * static_cast<ptrdiff_t>(channels)];
      sum += v * (dy == 0 && dx == 0 ? kCentre : kSide);
    }
  }
  return sum;
}

void SharpnessFloat(const ImageView& in, float factor, const ImageView& out) {
  const size_t channels = in.shape.channels, width = in.shape.width;
  const size_t row = width * channels;
  const float* src = in.pixels<const float>();
  float* dst = out.pixels<float>();
  std::copy(src, src + in.shape.elements(), dst);
  const float keep = factor, mix = static_cast<float>(1.0 - factor);
  for (size_t y = 1; y + 1 < in.shape.height; ++y) {
    for (size_t i = channels; i < row - channels; ++i) {
      const float* p = src + y * row + i;
      const float v = keep * *p + mix * Smoothed(p, row, channels);
      dst[y * row + i] = std::clamp(v, 0.0f, 1.0f);
    }
  }
}

// torchvision's equalize lookup table of one channel from its histogram (tone.h).
void EqualizeTable(const uint64_t (&histogram)[256], size_t pixels, uint8_t (&lut)[256]) {
  int highest = 255;
  while (histogram[highest] == 0) --highest;
  const uint64_t step = (pixels - histogram[highest]) / 255;
  uint64_t below = 0;
  for (int v = 0; v < 256; ++v) {
    lut[v] = step == 0 ? static_cast<uint8_t>(v)
                       : static_cast<uint8_t>(std::min<uint64_t>(255, (below + step / 2) / step));
    below += histogram[v];
  }
}

}  // namespace

void Invert(const ImageView& in, const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) {
    return Remap<uint8_t>(in, out, [](uint8_t x) { return static_cast<uint8_t>(255 - x); });
  }
  Remap<float>(in, out, [](float x) { return 1.0f - x; });
}

void Posterize(const ImageView& in, uint32_t bits, const ImageView& out) {
  const uint8_t mask = static_cast<uint8_t>(~((1u << (8 - bits)) - 1));
  Remap<uint8_t>(in, out, [mask](uint8_t x) { return static_cast<uint8_t>(x & mask); });
}

void Solarize(const ImageView& in, float threshold, const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) {
    return Remap<uint8_t>(in, out, [threshold](uint8_t x) {
      return x >= threshold ? static_cast<uint8_t>(255 - x) : x;
    });
  }
  Remap<float>(in, out, [threshold](float x) { return x >= threshold ? 1.0f - x : x; });
}

void Autocontrast(const ImageView& in, const ImageView& out) {
  const size_t channels = in.shape.channels;
  if (in.shape.type == PixelType::kFloat32) return AutocontrastTyped<float>(in, out, 1.0f);
  if (channels != 1 && channels != 3) return AutocontrastTyped<uint8_t>(in, out, 255.0f);
  // 1 or 3 channels of uint8: the vectorized loops (pixel_loops.h), the same arithmetic.
  const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  uint8_t low[3], high[3];
  loops.min_max_u8(in.pixels<const uint8_t>(), pixels, channels, low, high);
  float offset[3], scale[3];
  for (size_t c = 0; c < channels; ++c) {
    const float minimum = static_cast<float>(low[c]);
    scale[c] = high[c] == low[c] ? 1.0f : 255.0f / (static_cast<float>(high[c]) - minimum);
    offset[c] = high[c] == low[c] ? 0.0f : minimum;
  }
  loops.scale_offset_u8(in.pixels<const uint8_t>(), pixels, channels, offset, scale,
                        out.pixels<uint8_t>());
}

void Equalize(const ImageView& in, const ImageView& out) {
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  const uint8_t* src = in.pixels<const uint8_t>();
  uint8_t* dst = out.pixels<uint8_t>();
  // Up to four channels per pass over the pixels (histograms, then lookups), not one.
  constexpr size_t kGroup = 4;
  for (size_t first = 0; first < channels; first += kGroup) {
    const size_t group = std::min(kGroup, channels - first);
    uint64_t histogram[kGroup][256] = {};
    for (size_t i = 0; i < pixels; ++i) {
      const uint8_t* p = src + i * channels + first;
      for (size_t k = 0; k < group; ++k) ++histogram[k][p[k]];
    }
    uint8_t lut[kGroup][256];
    for (size_t k = 0; k < group; ++k) EqualizeTable(histogram[k], pixels, lut[k]);
    for (size_t i = 0; i < pixels; ++i) {
      const uint8_t* p = src + i * channels + first;
      uint8_t* q = dst + i * channels + first;
      for (size_t k = 0; k < group; ++k) q[k] = lut[k][p[k]];
    }
  }
}

void AdjustSharpness(const ImageView& in, float factor, const ImageView& out) {
  if (in.shape.height <= 2 || in.shape.width <= 2) {
    std::memcpy(out.data, in.data, in.shape.bytes());
    return;
  }
  if (in.shape.type == PixelType::kFloat32) return SharpnessFloat(in, factor, out);
  // uint8: the same arithmetic, vectorized (pixel_loops.h); the border rows and columns copied.
  const size_t channels = in.shape.channels;
  const size_t row = size_t{in.shape.width} * channels;
  const uint8_t* src = in.pixels<const uint8_t>();
  uint8_t* dst = out.pixels<uint8_t>();
  const float keep = factor, mix = static_cast<float>(1.0 - factor);
  const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
  std::memcpy(dst, src, row);
  for (size_t y = 1; y + 1 < in.shape.height; ++y) {
    const uint8_t* from = src + y * row;
    uint8_t* to = dst + y * row;
    std::memcpy(to, from, channels);
    loops.sharpen_row_u8(from, row, channels, channels, row - channels, keep, mix, to);
    std::memcpy(to + row - channels, from + row - channels, channels);
  }
  const size_t last = (size_t{in.shape.height} - 1) * row;
  std::memcpy(dst + last, src + last, row);
}

}  // namespace stoker
