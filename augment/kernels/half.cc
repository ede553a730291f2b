#include "augment/kernels/half.h"

#include <cstring>

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics start from a deliberately undefined register (`__Y = __Y`), which
// -Wmaybe-uninitialized reports wherever they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define STOKER_HALF_X86 1
#endif

namespace stoker {
namespace {

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

void Store16(void* dst, size_t i, uint16_t value) {
  std::memcpy(static_cast<char*>(dst) + 2 * i, &value, sizeof(value));
}

void Float16Portable(const float* src, size_t n, void* dst) {
  for (size_t i = 0; i < n; ++i) Store16(dst, i, Float16Bits(src[i]));
}

void Bfloat16Portable(const float* src, size_t n, void* dst) {
  for (size_t i = 0; i < n; ++i) Store16(dst, i, Bfloat16Bits(src[i]));
}

#ifdef STOKER_HALF_X86

__attribute__((target("avx2,f16c"))) void Float16Avx2(const float* src, size_t n, void* dst) {
  size_t i = 0;
  char* out = static_cast<char*>(dst);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
  Float16Portable(src + i, n - i, out + 2 * i);
}

__attribute__((target("avx512f"))) void Float16Avx512(const float* src, size_t n, void* dst) {
  size_t i = 0;
  char* out = static_cast<char*>(dst);
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), h);
  }
  Float16Portable(src + i, n - i, out + 2 * i);
}

// bfloat16 of 8 floats as 32-bit lanes (each < 2^16): Bfloat16Bits, lane by lane.
__attribute__((target("avx2"))) __m256i Bfloat16Lanes(__m256i x) {
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), one);
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i magnitude = _mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x0040));
  return _mm256_blendv_epi8(rounded, quiet, is_nan);
}

__attribute__((target("avx2"))) void Bfloat16Avx2(const float* src, size_t n, void* dst) {
  size_t i = 0;
  char* out = static_cast<char*>(dst);
  for (; i + 16 <= n; i += 16) {
    const __m256i lo = Bfloat16Lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    const __m256i hi =
        Bfloat16Lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8)));
    // packus works per 128-bit lane: [lo0-3 hi0-3 lo4-7 hi4-7]; the permute restores the order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), packed);
  }
  Bfloat16Portable(src + i, n - i, out + 2 * i);
}

__attribute__((target("avx512f"))) void Bfloat16Avx512(const float* src, size_t n, void* dst) {
  size_t i = 0;
  char* out = static_cast<char*>(dst);
  const __m512i one = _mm512_set1_epi32(1);
  for (; i + 16 <= n; i += 16) {
    const __m512i x = _mm512_loadu_si512(src + i);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7FFF)), lsb), 16);
    const __m512i magnitude = _mm512_and_si512(x, _mm512_set1_epi32(0x7FFFFFFF));
    const __mmask16 is_nan = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
    const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x0040));
    const __m512i lanes = _mm512_mask_blend_epi32(is_nan, rounded, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), _mm512_cvtepi32_epi16(lanes));
  }
  Bfloat16Portable(src + i, n - i, out + 2 * i);
}

#endif  // STOKER_HALF_X86

}  // namespace

uint16_t Float16Bits(float value) {
  const uint32_t bits = BitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) {  // NaN: quiet, top payload bits kept (as F16C does)
    return static_cast<uint16_t>(sign | 0x7E00 | ((magnitude >> 13) & 0x3FF));
  }
  if (magnitude >= 0x47800000)
    return static_cast<uint16_t>(sign | 0x7C00);  // ≥ 2^16 (and inf): inf
  if (magnitude < 0x38800000) {
    // Below 2^-14: a subnormal half (or 0). Adding 0.5 aligns the half's 10 mantissa bits at the
    // bottom of the float's mantissa, rounding to nearest even (the default FP mode).
    const float aligned = FloatOf(magnitude) + 0.5f;
    return static_cast<uint16_t>(sign | (BitsOf(aligned) - BitsOf(0.5f)));
  }
  // Normal: rebias the exponent and round the 13 dropped bits to nearest even; a carry out of
  // the mantissa moves to the exponent (65520 ≤ |x| < 65536 becomes inf).
  const uint32_t odd = (magnitude >> 13) & 1;
  const uint32_t rebased = magnitude - 0x38000000 + 0xFFF + odd;
  return static_cast<uint16_t>(sign | (rebased >> 13));
}

uint16_t Bfloat16Bits(float value) {
  const uint32_t bits = BitsOf(value);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

namespace half_internal {

#ifdef STOKER_HALF_X86
namespace {
bool CpuHasF16c() {
#if defined(__clang__) && __clang_major__ < 15
  return true;  // clang 14 (the fuzz build) does not know "f16c"; every AVX2 CPU has F16C
#else
  return __builtin_cpu_supports("f16c");
#endif
}
}  // namespace
#endif

HalfIsa BestHalfIsa() {
#ifdef STOKER_HALF_X86
  static const HalfIsa best = __builtin_cpu_supports("avx512f") ? HalfIsa::kAvx512
                              : (__builtin_cpu_supports("avx2") && CpuHasF16c())
                                  ? HalfIsa::kAvx2
                                  : HalfIsa::kPortable;
  return best;
#else
  return HalfIsa::kPortable;
#endif
}

void FloatToFloat16With(HalfIsa isa, const float* src, size_t n, void* dst) {
#ifdef STOKER_HALF_X86
  if (isa == HalfIsa::kAvx512) return Float16Avx512(src, n, dst);
  if (isa == HalfIsa::kAvx2) return Float16Avx2(src, n, dst);
#endif
  Float16Portable(src, n, dst);
}

void FloatToBfloat16With(HalfIsa isa, const float* src, size_t n, void* dst) {
#ifdef STOKER_HALF_X86
  if (isa == HalfIsa::kAvx512) return Bfloat16Avx512(src, n, dst);
  if (isa == HalfIsa::kAvx2) return Bfloat16Avx2(src, n, dst);
#endif
  Bfloat16Portable(src, n, dst);
}

}  // namespace half_internal

void FloatToFloat16(const float* src, size_t n, void* dst) {
  half_internal::FloatToFloat16With(half_internal::BestHalfIsa(), src, n, dst);
}

void FloatToBfloat16(const float* src, size_t n, void* dst) {
  half_internal::FloatToBfloat16With(half_internal::BestHalfIsa(), src, n, dst);
}

}  // namespace stoker
