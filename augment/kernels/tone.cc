#include "augment/kernels/tone.h"

#include <algorithm>
#include <cstddef>
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

}  // namespace stoker
