#include "augment/kernels/geometry.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

namespace stoker {
namespace {

// Mirrors rows of `width` pixels of kBytes bytes each (fixed size: memcpy becomes plain moves).
template <size_t kBytes>
void FlipRowsFixed(const uint8_t* src, uint8_t* dst, size_t rows, size_t width) {
  const size_t row_bytes = width * kBytes;
  for (size_t y = 0; y < rows; ++y) {
    const uint8_t* s = src + y * row_bytes;
    uint8_t* d = dst + y * row_bytes;
    if (s == d) {
      for (size_t x = 0; x < width / 2; ++x) {
        uint8_t a[kBytes];
        uint8_t* left = d + x * kBytes;
        uint8_t* right = d + (width - 1 - x) * kBytes;
        std::memcpy(a, left, kBytes);
        std::memcpy(left, right, kBytes);
        std::memcpy(right, a, kBytes);
      }
    } else {
      for (size_t x = 0; x < width; ++x) {
        std::memcpy(d + (width - 1 - x) * kBytes, s + x * kBytes, kBytes);
      }
    }
  }
}

// Any pixel size, byte by byte.
void FlipRowsGeneric(const uint8_t* src, uint8_t* dst, size_t rows, size_t width,
                     size_t pixel_bytes) {
  const size_t row_bytes = width * pixel_bytes;
  for (size_t y = 0; y < rows; ++y) {
    const uint8_t* s = src + y * row_bytes;
    uint8_t* d = dst + y * row_bytes;
    if (s == d) {
      for (size_t x = 0; x < width / 2; ++x) {
        uint8_t* left = d + x * pixel_bytes;
        uint8_t* right = d + (width - 1 - x) * pixel_bytes;
        for (size_t b = 0; b < pixel_bytes; ++b) std::swap(left[b], right[b]);
      }
    } else {
      for (size_t x = 0; x < width; ++x) {
        std::memcpy(d + (width - 1 - x) * pixel_bytes, s + x * pixel_bytes, pixel_bytes);
      }
    }
  }
}

}  // namespace

void Crop(const ImageView& in, uint32_t top, uint32_t left, const ImageView& out) {
  const size_t pixel_bytes = size_t{in.shape.channels} * PixelTypeSize(in.shape.type);
  const size_t in_row_bytes = size_t{in.shape.width} * pixel_bytes;
  const size_t out_row_bytes = size_t{out.shape.width} * pixel_bytes;
  const uint8_t* src =
      in.pixels<const uint8_t>() + size_t{top} * in_row_bytes + size_t{left} * pixel_bytes;
  uint8_t* dst = out.pixels<uint8_t>();
  for (uint32_t y = 0; y < out.shape.height; ++y) {
    std::memcpy(dst + y * out_row_bytes, src + y * in_row_bytes, out_row_bytes);
  }
}

void HorizontalFlip(const ImageView& in, const ImageView& out) {
  const size_t pixel_bytes = size_t{in.shape.channels} * PixelTypeSize(in.shape.type);
  const uint8_t* src = in.pixels<const uint8_t>();
  uint8_t* dst = out.pixels<uint8_t>();
  const size_t rows = in.shape.height;
  const size_t width = in.shape.width;
  switch (pixel_bytes) {
    case 1:
      return FlipRowsFixed<1>(src, dst, rows, width);
    case 3:
      return FlipRowsFixed<3>(src, dst, rows, width);
    case 4:
      return FlipRowsFixed<4>(src, dst, rows, width);
    case 12:
      return FlipRowsFixed<12>(src, dst, rows, width);
    default:
      return FlipRowsGeneric(src, dst, rows, width, pixel_bytes);
  }
}

void VerticalFlip(const ImageView& in, const ImageView& out) {
  const size_t row_bytes =
      size_t{in.shape.width} * in.shape.channels * PixelTypeSize(in.shape.type);
  const uint8_t* src = in.pixels<const uint8_t>();
  uint8_t* dst = out.pixels<uint8_t>();
  const size_t rows = in.shape.height;
  for (size_t y = 0; y < rows / 2; ++y) {  // Swap pairs, so that in place works too.
    uint8_t* top = dst + y * row_bytes;
    uint8_t* bottom = dst + (rows - 1 - y) * row_bytes;
    if (src == dst) {
      std::swap_ranges(top, top + row_bytes, bottom);
    } else {
      std::memcpy(top, src + (rows - 1 - y) * row_bytes, row_bytes);
      std::memcpy(bottom, src + y * row_bytes, row_bytes);
    }
  }
  if (rows % 2 == 1 && src != dst) {
    const size_t middle = rows / 2 * row_bytes;
    std::memcpy(dst + middle, src + middle, row_bytes);
  }
}

}  // namespace stoker
