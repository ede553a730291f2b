#include "augment/kernels/erase.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace stoker {
namespace {

template <typename T>
T Cast(float v);
template <>
uint8_t Cast<uint8_t>(float v) {
  return static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f));
}
template <>
float Cast<float>(float v) {
  return v;
}

template <typename T>
void EraseTyped(const ImageView& image, const PixelRect& rect, const float* values,
                bool per_pixel) {
  const size_t channels = image.shape.channels;
  T* pixels = image.pixels<T>();
  for (uint32_t y = 0; y < rect.height; ++y) {
    T* row = pixels + (size_t{rect.top} + y) * image.shape.width * channels + rect.left * channels;
    for (size_t i = 0; i < size_t{rect.width} * channels; ++i) {
      const float v =
          per_pixel ? values[y * size_t{rect.width} * channels + i] : values[i % channels];
      row[i] = Cast<T>(v);
    }
  }
}

}  // namespace

void EraseRect(const ImageView& image, const PixelRect& rect, const float* values, bool per_pixel) {
  if (image.shape.type == PixelType::kUint8) {
    return EraseTyped<uint8_t>(image, rect, values, per_pixel);
  }
  EraseTyped<float>(image, rect, values, per_pixel);
}

}  // namespace stoker
