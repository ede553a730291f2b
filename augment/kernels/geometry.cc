#include "augment/kernels/geometry.h"

#if defined(__x86_64__)
#include <tmmintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

namespace stoker {
namespace {

#if defined(__x86_64__)
// pshufb masks that mirror 16 three-byte pixels (48 bytes, three 16-byte registers): output
// register r is the OR of input register i shuffled by masks[r][i] (-128 selects zero).
struct MirrorMasks {
  alignas(16) int8_t masks[3][3][16];
};

constexpr MirrorMasks MakeMirrorMasks() {
  MirrorMasks m{};
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 16; ++j) {
        const int k = 16 * r + j;                              // output byte
        const int source = 3 * (15 - k / 3) + k % 3 - 16 * i;  // its byte in input register i
        m.masks[r][i][j] = static_cast<int8_t>(source >= 0 && source < 16 ? source : -128);
      }
    }
  }
  return m;
}

constexpr MirrorMasks kMirrorMasks = MakeMirrorMasks();

// Mirrored 16 pixels of 3 bytes from `src` into out[0..2].
__attribute__((target("ssse3"))) inline void Mirror16(const uint8_t* src, __m128i out[3]) {
  __m128i in[3];
  for (int i = 0; i < 3; ++i) in[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src) + i);
  for (int r = 0; r < 3; ++r) {
    __m128i acc = _mm_setzero_si128();
    for (int i = 0; i < 3; ++i) {
      const __m128i mask =
          _mm_load_si128(reinterpret_cast<const __m128i*>(kMirrorMasks.masks[r][i]));
      acc = _mm_or_si128(acc, _mm_shuffle_epi8(in[i], mask));
    }
    out[r] = acc;
  }
}

__attribute__((target("ssse3"))) inline void Store48(const __m128i v[3], uint8_t* dst) {
  for (int i = 0; i < 3; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst) + i, v[i]);
}

// FlipRowsFixed<3> with SSSE3, 16 pixels at a time (what the uint8 RGB flips of the JPEG
// pipelines run): blocks from both ends swap mirrored, the middle (< 32 pixels) goes pixel by
// pixel.
__attribute__((target("ssse3"))) void FlipRows3Ssse3(const uint8_t* src, uint8_t* dst, size_t rows,
                                                     size_t width) {
  constexpr size_t kBlock = 16;
  const size_t row_bytes = width * 3;
  for (size_t y = 0; y < rows; ++y) {
    const uint8_t* s = src + y * row_bytes;
    uint8_t* d = dst + y * row_bytes;
    size_t left = 0, right = width;  // Pixels [left, right) are still to be placed.
    __m128i a[3], b[3];
    while (right - left >= 2 * kBlock) {
      Mirror16(s + left * 3, a);
      Mirror16(s + (right - kBlock) * 3, b);
      Store48(b, d + left * 3);
      Store48(a, d + (right - kBlock) * 3);
      left += kBlock;
      right -= kBlock;
    }
    // The middle: pixel left + x goes to right - 1 - x, swapping pairs so in place works too.
    for (size_t x = 0; x < (right - left + 1) / 2; ++x) {
      uint8_t p[3], q[3];
      std::memcpy(p, s + (left + x) * 3, 3);
      std::memcpy(q, s + (right - 1 - x) * 3, 3);
      std::memcpy(d + (left + x) * 3, q, 3);
      std::memcpy(d + (right - 1 - x) * 3, p, 3);
    }
  }
}

bool HasSsse3() {
  static const bool supported = __builtin_cpu_supports("ssse3");
  return supported;
}
#endif  // __x86_64__

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
#if defined(__x86_64__)
      if (HasSsse3()) return FlipRows3Ssse3(src, dst, rows, width);
#endif
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
