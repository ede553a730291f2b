#include "augment/kernels/erase.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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
  const size_t span = size_t{rect.width} * channels;
  T* pixels = image.pixels<T>();
  const T* first_row = nullptr;
  for (uint32_t y = 0; y < rect.height; ++y) {
    T* row = pixels + ((size_t{rect.top} + y) * image.shape.width + rect.left) * channels;
    if (per_pixel) {
      const float* from = values + y * span;
      for (size_t i = 0; i < span; ++i) row[i] = Cast<T>(from[i]);
    } else if (first_row != nullptr) {
      std::memcpy(row, first_row, span * sizeof(T));  // every row of a constant is the first
    } else {
      for (size_t x = 0; x < rect.width; ++x) {
        for (size_t c = 0; c < channels; ++c) row[x * channels + c] = Cast<T>(values[c]);
      }
      first_row = row;
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
