#include "augment/kernels/resize_linear_rgb.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics (_mm512_undefined_epi32's self-initialization) trip
// -Wuninitialized and -Wmaybe-uninitialized when inlined (GCC bug 105593); nothing here is
// uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace stoker {
#if defined(__x86_64__)
namespace {

constexpr int kChannels = 3;
constexpr size_t kRowPadding = 2;      // int32s after a resampled row that vector stores may write
constexpr float kCoefScale = 2048.0f;  // OpenCV's INTER_RESIZE_COEF_SCALE (11 bits)

// OpenCV's cvFloor for floats.
int FloorToInt(float v) {
  const int i = static_cast<int>(v);
  return i - (static_cast<float>(i) > v ? 1 : 0);
}

// OpenCV's saturate_cast<short>(float): rounded to nearest, ties to even.
int16_t Coefficient(float v) { return static_cast<int16_t>(std::lrint(v)); }

// Per output column or row: the first source index and its two weights, as OpenCV's
// resize computes them (source position (d + 0.5) * scale - 0.5 in float, scale = 1 / (dst/src)
// in double).
struct Taps {
  std::vector<int> first;
  std::vector<int16_t> weights;  // weights[2d], weights[2d + 1]
};

// `clamp`: columns clamp the position to the edge pixel with weight (1, 0) (OpenCV's xofs);
// rows keep it and clamp the row indices when reading (its yofs).
Taps MakeTaps(uint32_t src, uint32_t dst, bool clamp) {
  const double scale = 1. / (static_cast<double>(dst) / src);
  Taps taps;
  taps.first.resize(dst);
  taps.weights.resize(size_t{2} * dst);
  for (uint32_t d = 0; d < dst; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    int s = FloorToInt(f);
    f -= static_cast<float>(s);
    if (clamp && s < 0) f = 0, s = 0;
    if (clamp && s >= static_cast<int>(src) - 1) f = 0, s = static_cast<int>(src) - 1;
    taps.first[d] = s;
    taps.weights[2 * d] = Coefficient((1.f - f) * kCoefScale);
    taps.weights[2 * d + 1] = Coefficient(f * kCoefScale);
  }
  return taps;
}

// Output column x of one source row: its three int32 sums (and a fourth lane to ignore).
__attribute__((target("ssse3"))) inline __m128i Column(const uint8_t* row, const int* first,
                                                       const int16_t* weights, uint32_t x) {
  const __m128i pairs = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m128i pixels =
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + kChannels * first[x]));
  int32_t w;
  std::memcpy(&w, weights + 2 * x, sizeof(w));
  return _mm_madd_epi16(_mm_shuffle_epi8(pixels, pairs), _mm_set1_epi32(w));
}

// One source row, horizontally: out[3x + c] = row[3s + c] * w0 + row[3s + 3 + c] * w1 for
// s = taps.first[x], for the columns from `x` on (those before are done). Columns before
// `vector_end` load 8 bytes at pixel s (readable there).
__attribute__((target("ssse3"))) void HorizontalPass(const uint8_t* row, const Taps& taps,
                                                     uint32_t x, uint32_t vector_end,
                                                     int32_t* out) {
  const uint32_t width = static_cast<uint32_t>(taps.first.size());
  const int* first = taps.first.data();  // Locals: the stores below cannot move them.
  const int16_t* weights = taps.weights.data();
  const auto column = [&](uint32_t x) { return Column(row, first, weights, x); };
  for (; x + 2 <= vector_end; x += 2) {  // Two columns: both computed before either store.
    const __m128i a = column(x), b = column(x + 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kChannels * x), a);  // 4th lane: pad
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kChannels * (x + 1)), b);
  }
  for (; x < vector_end; ++x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kChannels * x), column(x));
  }
  for (; x < width; ++x) {
    const uint8_t* p = row + kChannels * first[x];
    const int w0 = weights[2 * x], w1 = weights[2 * x + 1];
    for (int c = 0; c < kChannels; ++c) {
      out[kChannels * x + c] = p[c] * w0 + (w1 != 0 ? p[kChannels + c] * w1 : 0);
    }
  }
}

// OpenCV's VResizeLinear for uchar: ((w0 * (a >> 4)) >> 16) + ((w1 * (b >> 4)) >> 16), + 2, >> 2.
uint8_t VerticalOne(int32_t a, int32_t b, int w0, int w1) {
  return static_cast<uint8_t>((((w0 * (a >> 4)) >> 16) + ((w1 * (b >> 4)) >> 16) + 2) >> 2);
}

__attribute__((target("ssse3"))) void VerticalPass(const int32_t* a, const int32_t* b, int16_t w0,
                                                   int16_t w1, size_t n, uint8_t* out) {
  const __m128i v0 = _mm_set1_epi16(w0), v1 = _mm_set1_epi16(w1), two = _mm_set1_epi16(2);
  const auto load8 = [](const int32_t* p) {  // 8 values >> 4, as int16
    const __m128i lo = _mm_srai_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), 4);
    const __m128i hi = _mm_srai_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 4)), 4);
    return _mm_packs_epi32(lo, hi);
  };
  size_t x = 0;
  for (; x + 16 <= n; x += 16) {
    __m128i half[2];
    for (int h = 0; h < 2; ++h) {
      const __m128i sum = _mm_adds_epi16(_mm_mulhi_epi16(load8(a + x + 8 * h), v0),
                                         _mm_mulhi_epi16(load8(b + x + 8 * h), v1));
      half[h] = _mm_srai_epi16(_mm_adds_epi16(sum, two), 2);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), _mm_packus_epi16(half[0], half[1]));
  }
  for (; x < n; ++x) out[x] = VerticalOne(a[x], b[x], w0, w1);
}

// The same two passes with wider vectors (identical integer steps, so identical bytes). A
// column's 8 source bytes go to their own 128-bit lane, where the pshufb pattern and pmaddwd
// work as above; the lanes' first three int32 sums are then packed together and stored.
__attribute__((target("avx2"))) void HorizontalPassAvx2(const uint8_t* row, const Taps& taps,
                                                        uint32_t vector_end, int32_t* out) {
  const int* first = taps.first.data();
  const int16_t* weights = taps.weights.data();
  const __m256i pairs = _mm256_broadcastsi128_si256(
      _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1));
  const __m256i spread = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);  // a weight per lane
  const __m256i pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);    // 3 sums of each lane
  uint32_t x = 0;
  for (; x + 2 <= vector_end; x += 2) {
    const __m128i lo =
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + kChannels * first[x]));
    const __m128i hi =
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + kChannels * first[x + 1]));
    const __m256i pixels = _mm256_shuffle_epi8(_mm256_set_m128i(hi, lo), pairs);
    int64_t w;
    std::memcpy(&w, weights + 2 * x, sizeof(w));
    const __m256i w2 = _mm256_permutevar8x32_epi32(_mm256_set1_epi64x(w), spread);
    const __m256i sums = _mm256_permutevar8x32_epi32(_mm256_madd_epi16(pixels, w2), pack);
    // A plain store (AMD runs vpmaskmovd stores slowly): lanes 6 and 7 are overwritten by the
    // next columns, or land in the buffer's padding.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kChannels * x), sums);
  }
  _mm256_zeroupper();  // GCC leaves it out before this tail call; SSE code follows
  HorizontalPass(row, taps, x, vector_end, out);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void HorizontalPassAvx512(const uint8_t* row,
                                                                               const Taps& taps,
                                                                               uint32_t vector_end,
                                                                               int32_t* out) {
  const int* first = taps.first.data();
  const int16_t* weights = taps.weights.data();
  const __m512i pairs = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1));
  const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  const __m512i pack = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 15, 15, 15);
  const auto load = [row, first](uint32_t x) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + kChannels * first[x]));
  };
  uint32_t x = 0;
  for (; x + 4 <= vector_end; x += 4) {
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(load(x)), load(x + 1), 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(load(x + 2)), load(x + 3), 1);
    const __m512i pixels =
        _mm512_shuffle_epi8(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), pairs);
    const __m512i w4 = _mm512_permutexvar_epi32(
        spread,
        _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(weights + 2 * x))));
    const __m512i sums = _mm512_permutexvar_epi32(pack, _mm512_madd_epi16(pixels, w4));
    _mm512_mask_storeu_epi32(out + kChannels * x, 0x0FFF, sums);
  }
  _mm256_zeroupper();  // GCC leaves it out before this tail call; SSE code follows
  HorizontalPass(row, taps, x, vector_end, out);
}

// 16 values >> 4, as int16 in order (packssdw works per 128-bit lane; the permute restores it).
__attribute__((target("avx2"))) __m256i PackedShifted16(const int32_t* p) {
  const __m256i lo = _mm256_srai_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), 4);
  const __m256i hi =
      _mm256_srai_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8)), 4);
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
}

// 32 values >> 4, as int16 in order (vpmovsdw saturates as packssdw does).
__attribute__((target("avx512f,avx512bw,avx512vl"))) __m512i PackedShifted32(const int32_t* p) {
  const __m256i lo = _mm512_cvtsepi32_epi16(_mm512_srai_epi32(_mm512_loadu_si512(p), 4));
  const __m256i hi = _mm512_cvtsepi32_epi16(_mm512_srai_epi32(_mm512_loadu_si512(p + 16), 4));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

__attribute__((target("avx2"))) void VerticalPassAvx2(const int32_t* a, const int32_t* b,
                                                      int16_t w0, int16_t w1, size_t n,
                                                      uint8_t* out) {
  const __m256i v0 = _mm256_set1_epi16(w0), v1 = _mm256_set1_epi16(w1), two = _mm256_set1_epi16(2);
  size_t x = 0;
  for (; x + 16 <= n; x += 16) {
    const __m256i a16 = PackedShifted16(a + x), b16 = PackedShifted16(b + x);
    const __m256i sum = _mm256_adds_epi16(_mm256_mulhi_epi16(a16, v0), _mm256_mulhi_epi16(b16, v1));
    const __m256i v = _mm256_srai_epi16(_mm256_adds_epi16(sum, two), 2);
    const __m256i bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), _mm256_castsi256_si128(bytes));
  }
  _mm256_zeroupper();  // GCC leaves it out before this tail call; SSE code follows
  VerticalPass(a + x, b + x, w0, w1, n - x, out + x);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void VerticalPassAvx512(
    const int32_t* a, const int32_t* b, int16_t w0, int16_t w1, size_t n, uint8_t* out) {
  const __m512i v0 = _mm512_set1_epi16(w0), v1 = _mm512_set1_epi16(w1), two = _mm512_set1_epi16(2);
  size_t x = 0;
  for (; x + 32 <= n; x += 32) {
    const __m512i sum = _mm512_adds_epi16(_mm512_mulhi_epi16(PackedShifted32(a + x), v0),
                                          _mm512_mulhi_epi16(PackedShifted32(b + x), v1));
    const __m512i v = _mm512_srai_epi16(_mm512_adds_epi16(sum, two), 2);
    // packuswb: negatives to 0, then unsigned saturation (vpmovuswb alone would take them as
    // large).
    const __m256i bytes = _mm512_cvtusepi16_epi8(_mm512_max_epi16(v, _mm512_setzero_si512()));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), bytes);
  }
  _mm256_zeroupper();  // GCC leaves it out before this tail call; SSE code follows
  VerticalPass(a + x, b + x, w0, w1, n - x, out + x);
}

// OpenCV's clip(y, 0, height) of a row index.
uint32_t ClipRow(int y, uint32_t height) {
  if (y < 0) return 0;
  return static_cast<uint32_t>(y) < height ? static_cast<uint32_t>(y) : height - 1;
}

// One build's two passes.
struct Passes {
  void (*horizontal)(const uint8_t* row, const Taps& taps, uint32_t vector_end, int32_t* out);
  void (*vertical)(const int32_t* a, const int32_t* b, int16_t w0, int16_t w1, size_t n,
                   uint8_t* out);
};

void HorizontalPassSsse3(const uint8_t* row, const Taps& taps, uint32_t vector_end, int32_t* out) {
  HorizontalPass(row, taps, 0, vector_end, out);
}

Passes PassesFor(resize_internal::LinearRgbIsa isa) {
  switch (isa) {
    case resize_internal::LinearRgbIsa::kAvx512:
      return Passes{HorizontalPassAvx512, VerticalPassAvx512};
    case resize_internal::LinearRgbIsa::kAvx2:
      return Passes{HorizontalPassAvx2, VerticalPassAvx2};
    case resize_internal::LinearRgbIsa::kSsse3:
      break;
  }
  return Passes{HorizontalPassSsse3, VerticalPass};
}

void Resample(const Passes& passes, const ImageView& in, const PixelRect& region,
              const ImageView& out) {
  const Taps columns = MakeTaps(region.width, out.shape.width, /*clamp=*/true);
  const Taps rows = MakeTaps(region.height, out.shape.height, /*clamp=*/false);
  const size_t in_row = size_t{in.shape.width} * kChannels;
  const size_t out_row = size_t{out.shape.width} * kChannels;
  // The 8-byte loads stay within the row of `in` (bytes from the window's left edge on).
  const size_t readable = (size_t{in.shape.width} - region.left) * kChannels;
  uint32_t vector_end = 0;
  while (vector_end < out.shape.width &&
         size_t{kChannels} * columns.first[vector_end] + 8 <= readable) {
    ++vector_end;
  }
  // Two horizontally resampled rows, each remembered by its source row (-1: none), + padding
  // for the stores' unused lanes (1 int32 for SSSE3's, 2 for AVX2's).
  std::vector<int32_t> buffers[2] = {std::vector<int32_t>(out_row + kRowPadding),
                                     std::vector<int32_t>(out_row + kRowPadding)};
  int64_t held[2] = {-1, -1};
  const uint8_t* window =
      in.pixels<const uint8_t>() + region.top * in_row + region.left * kChannels;
  // The buffer holding source row `y`, resampling it into the one not holding `keep`.
  const auto row_of = [&](uint32_t y, int64_t keep) -> const int32_t* {
    for (int k = 0; k < 2; ++k) {
      if (held[k] == y) return buffers[k].data();
    }
    const int k = held[0] == keep ? 1 : 0;
    passes.horizontal(window + y * in_row, columns, vector_end, buffers[k].data());
    held[k] = y;
    return buffers[k].data();
  };
  for (uint32_t y = 0; y < out.shape.height; ++y) {
    const uint32_t y0 = ClipRow(rows.first[y], region.height);
    const uint32_t y1 = ClipRow(rows.first[y] + 1, region.height);
    const int32_t* a = row_of(y0, -1);
    const int32_t* b = row_of(y1, y0);
    passes.vertical(a, b, rows.weights[2 * y], rows.weights[2 * y + 1], out_row,
                    out.pixels<uint8_t>() + y * out_row);
  }
}

}  // namespace

bool ResizeLinearRgbApplies(const ImageShape& in, const PixelRect& region, const ImageShape& out) {
  static const bool ssse3 = __builtin_cpu_supports("ssse3");
  if (!ssse3 || in.type != PixelType::kUint8 || in.channels != kChannels) return false;
  // OpenCV turns an exact 2x shrink in both dimensions into INTER_AREA.
  const double sx = 1. / (static_cast<double>(out.width) / region.width);
  const double sy = 1. / (static_cast<double>(out.height) / region.height);
  const bool exact2 = std::abs(sx - 2.0) < DBL_EPSILON && std::abs(sy - 2.0) < DBL_EPSILON;
  return !exact2;
}

namespace resize_internal {

bool CpuSupports(LinearRgbIsa isa) {
  switch (isa) {
    case LinearRgbIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
    case LinearRgbIsa::kAvx2:
      return __builtin_cpu_supports("avx2");
    case LinearRgbIsa::kSsse3:
      return __builtin_cpu_supports("ssse3");
  }
  return false;
}

void ResizeLinearRgbWith(LinearRgbIsa isa, const ImageView& in, const PixelRect& region,
                         const ImageView& out) {
  Resample(PassesFor(isa), in, region, out);
}

}  // namespace resize_internal

void ResizeLinearRgb(const ImageView& in, const PixelRect& region, const ImageView& out) {
  using resize_internal::LinearRgbIsa;
  static const Passes passes =
      PassesFor(resize_internal::CpuSupports(LinearRgbIsa::kAvx512) ? LinearRgbIsa::kAvx512
                : resize_internal::CpuSupports(LinearRgbIsa::kAvx2) ? LinearRgbIsa::kAvx2
                                                                    : LinearRgbIsa::kSsse3);
  Resample(passes, in, region, out);
}

#else  // !__x86_64__: no SSSE3, so cv::resize does every resize.

bool ResizeLinearRgbApplies(const ImageShape&, const PixelRect&, const ImageShape&) {
  return false;
}
void ResizeLinearRgb(const ImageView&, const PixelRect&, const ImageView&) {}
namespace resize_internal {
bool CpuSupports(LinearRgbIsa) { return false; }
void ResizeLinearRgbWith(LinearRgbIsa, const ImageView&, const PixelRect&, const ImageView&) {}
}  // namespace resize_internal

#endif  // __x86_64__
}  // namespace stoker
