#include "augment/kernels/color.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace stoker {
namespace {

constexpr float kRed = 0.2989f, kGreen = 0.587f, kBlue = 0.114f;

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
  static constexpr float kMax = 255.0f;
  static uint8_t Store(float v) { return static_cast<uint8_t>(v); }  // v is in [0, 255].
};

template <typename T>
float GrayOf(const T* p, size_t channels) {
  if (channels == 1) return static_cast<float>(p[0]);
  const float gray = kRed * static_cast<float>(p[0]) + kGreen * static_cast<float>(p[1]) +
                     kBlue * static_cast<float>(p[2]);
  return static_cast<float>(Pixel<T>::Store(gray));
}

template <typename T>
T Blend(T a, float b, float factor) {
  const float v = factor * static_cast<float>(a) + (1.0f - factor) * b;
  return Pixel<T>::Store(std::clamp(v, 0.0f, Pixel<T>::kMax));
}

// out = blend(in, other, factor) where other is `constant`, or gray(pixel) when per_pixel_gray.
template <typename T>
void BlendImage(const ImageView& in, float constant, bool per_pixel_gray, float factor,
                const ImageView& out) {
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
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
  for (size_t i = 0; i < pixels; ++i) sum += GrayOf(src + i * channels, channels);
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

}  // namespace stoker
