#include "augment/kernels/tone.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

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

template <typename T>
float Smoothed(const T* p, size_t row, size_t channels) {
  // Interior pixel p: the 3x3 neighbourhood, centre weight 5, others 1, over 13 (float32
  // weights, as torchvision's kernel tensor).
  constexpr float kSide = 1.0f / 13.0f, kCentre = 5.0f / 13.0f;
  float sum = 0.0f;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) {
      const float v = static_cast<float>(
          p[dy * static_cast<ptrdiff_t>(row) + dx * static_cast<ptrdiff_t>(channels)]);
      sum += v * (dy == 0 && dx == 0 ? kCentre : kSide);
    }
  }
  return sum;
}

template <typename T>
void SharpnessTyped(const ImageView& in, float factor, const ImageView& out, float bound) {
  const size_t channels = in.shape.channels, width = in.shape.width;
  const size_t row = width * channels;
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  std::copy(src, src + in.shape.elements(), dst);
  const float keep = factor, mix = static_cast<float>(1.0 - factor);
  for (size_t y = 1; y + 1 < in.shape.height; ++y) {
    for (size_t i = channels; i < row - channels; ++i) {
      const T* p = src + y * row + i;
      float smooth = Smoothed(p, row, channels);
      if (std::is_integral_v<T>) smooth = std::nearbyint(smooth);  // torch.round: half to even
      const float v = keep * static_cast<float>(*p) + mix * smooth;
      dst[y * row + i] = static_cast<T>(std::clamp(v, 0.0f, bound));
    }
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
  if (in.shape.type == PixelType::kUint8) return AutocontrastTyped<uint8_t>(in, out, 255.0f);
  AutocontrastTyped<float>(in, out, 1.0f);
}

void Equalize(const ImageView& in, const ImageView& out) {
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  const uint8_t* src = in.pixels<const uint8_t>();
  uint8_t* dst = out.pixels<uint8_t>();
  for (size_t c = 0; c < channels; ++c) {
    uint64_t histogram[256] = {};
    for (size_t i = 0; i < pixels; ++i) ++histogram[src[i * channels + c]];
    int highest = 255;
    while (histogram[highest] == 0) --highest;
    const uint64_t step = (pixels - histogram[highest]) / 255;
    uint8_t lut[256];
    uint64_t below = 0;
    for (int v = 0; v < 256; ++v) {
      lut[v] = step == 0 ? static_cast<uint8_t>(v)
                         : static_cast<uint8_t>(std::min<uint64_t>(255, (below + step / 2) / step));
      below += histogram[v];
    }
    for (size_t i = 0; i < pixels; ++i) dst[i * channels + c] = lut[src[i * channels + c]];
  }
}

void AdjustSharpness(const ImageView& in, float factor, const ImageView& out) {
  if (in.shape.height <= 2 || in.shape.width <= 2) {
    std::memcpy(out.data, in.data, in.shape.bytes());
    return;
  }
  if (in.shape.type == PixelType::kUint8) return SharpnessTyped<uint8_t>(in, factor, out, 255.0f);
  SharpnessTyped<float>(in, factor, out, 1.0f);
}

}  // namespace stoker
