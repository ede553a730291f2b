#include "augment/kernels/color.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "augment/kernels/pixel_loops.h"

namespace stoker {
namespace {

using pixel_loops::kBlue;
using pixel_loops::kGreen;
using pixel_loops::kRed;

// Float value ↔ pixel, with torchvision's bounds and uint8 truncation.
template <typename T>
struct Pixel;
template <>
struct Pixel<float> {
  static constexpr float kMax = 1.0f;
  static float Store(float v) { return v; }
};
template <>
struct Pixel<uint8_t> {
  [[maybe_unused]] static constexpr float kMax = 255.0f;             // clang 14 calls it unused
  static uint8_t Store(float v) { return static_cast<uint8_t>(v); }  // v is in [0, 255].
};

template <typename T>
float GrayOf(const T* p, size_t channels) {
  if (channels == 1) return static_cast<float>(p[0]);
  const float gray = kRed * static_cast<float>(p[0]) + kGreen * static_cast<float>(p[1]) +
                     kBlue * static_cast<float>(p[2]);
  return static_cast<float>(Pixel<T>::Store(gray));
}

// Clamps to [0, kMax] and stores. For uint8 the truncation comes first and the clamp is on the
// integer: the same value as clamping the float then truncating, for every finite v, without
// the float compare branches (which mispredict on images).
template <typename T>
T ClampStore(float v) {
  return Pixel<T>::Store(std::clamp(v, 0.0f, Pixel<T>::kMax));
}
template <>
uint8_t ClampStore<uint8_t>(float v) {
  return static_cast<uint8_t>(std::min(std::max(static_cast<int32_t>(v), 0), 255));
}

template <typename T>
T Blend(T a, float b, float factor) {
  return ClampStore<T>(factor * static_cast<float>(a) + (1.0f - factor) * b);
}

// Saturation of RGB: each pixel blended with its own gray, the channel count known (unrolled).
template <typename T>
void BlendGrayRgb(const T* src, size_t pixels, float factor, T* dst) {
  for (size_t i = 0; i < pixels; ++i) {
    const T* p = src + i * 3;
    const float other = GrayOf(p, 3);
    dst[i * 3] = Blend(p[0], other, factor);
    dst[i * 3 + 1] = Blend(p[1], other, factor);
    dst[i * 3 + 2] = Blend(p[2], other, factor);
  }
}

// out = blend(in, other, factor) where other is `constant`, or gray(pixel) when per_pixel_gray.
// uint8 with a constant, or RGB with its gray: the vectorized loops (pixel_loops.h), the same
// arithmetic.
template <typename T>
void BlendImage(const ImageView& in, float constant, bool per_pixel_gray, float factor,
                const ImageView& out) {
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  if constexpr (std::is_same_v<T, uint8_t>) {
    const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
    if (!per_pixel_gray) {
      return loops.blend_constant_u8(src, pixels * channels, factor, (1.0f - factor) * constant,
                                     dst);
    }
    if (channels == 3) return loops.blend_gray_rgb_u8(src, pixels, factor, dst);
  }
  if (per_pixel_gray && channels == 3) return BlendGrayRgb(src, pixels, factor, dst);
  for (size_t i = 0; i < pixels; ++i) {
    const T* p = src + i * channels;
    const float other = per_pixel_gray ? GrayOf(p, channels) : constant;
    for (size_t c = 0; c < channels; ++c) dst[i * channels + c] = Blend(p[c], other, factor);
  }
}

template <typename T>
float MeanGray(const ImageView& in) {
  const T* src = in.pixels<const T>();
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  double sum = 0;
  if constexpr (std::is_same_v<T, uint8_t>) {
    // uint8 grays are integers: an integer sum is exact, as the double one was.
    uint64_t total = 0;
    if (channels == 3) {
      total = pixel_loops::ActivePixelLoops().gray_sum_rgb_u8(src, pixels);
    } else {
      for (size_t i = 0; i < pixels; ++i) {
        total += static_cast<uint32_t>(GrayOf(src + i * channels, channels));
      }
    }
    sum = static_cast<double>(total);
  } else {
    for (size_t i = 0; i < pixels; ++i) sum += GrayOf(src + i * channels, channels);
  }
  return pixels == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(pixels));
}

template <typename T>
void GrayscaleImpl(const ImageView& in, const ImageView& out) {
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  const size_t in_channels = in.shape.channels;
  const size_t out_channels = out.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  for (size_t i = 0; i < pixels; ++i) {
    const T gray = Pixel<T>::Store(GrayOf(src + i * in_channels, in_channels));
    for (size_t c = 0; c < out_channels; ++c) dst[i * out_channels + c] = gray;
  }
}

void BlendAny(const ImageView& in, float constant, bool per_pixel_gray, float factor,
              const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) {
    BlendImage<uint8_t>(in, constant, per_pixel_gray, factor, out);
  } else {
    BlendImage<float>(in, constant, per_pixel_gray, factor, out);
  }
}

}  // namespace

void Grayscale(const ImageView& in, const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) {
    GrayscaleImpl<uint8_t>(in, out);
  } else {
    GrayscaleImpl<float>(in, out);
  }
}

void AdjustBrightness(const ImageView& in, float factor, const ImageView& out) {
  BlendAny(in, 0.0f, false, factor, out);
}

void AdjustContrast(const ImageView& in, float factor, const ImageView& out) {
  const float mean =
      in.shape.type == PixelType::kUint8 ? MeanGray<uint8_t>(in) : MeanGray<float>(in);
  BlendAny(in, mean, false, factor, out);
}

void AdjustSaturation(const ImageView& in, float factor, const ImageView& out) {
  BlendAny(in, 0.0f, true, factor, out);
}

void AdjustHue(const ImageView& in, float hue_factor, const ImageView& out) {
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  if (in.shape.channels == 1) {  // torchvision leaves gray images as they are
    if (in.data != out.data) std::memcpy(out.data, in.data, in.shape.bytes());
    return;
  }
  // 3 channels: the vectorized loops (pixel_loops.h), torchvision's float32 formulas.
  const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
  if (in.shape.type == PixelType::kUint8) {
    return loops.shift_hue_rgb_u8(in.pixels<const uint8_t>(), pixels, hue_factor,
                                  out.pixels<uint8_t>());
  }
  loops.shift_hue_rgb_f32(in.pixels<const float>(), pixels, hue_factor, out.pixels<float>());
}

}  // namespace stoker
