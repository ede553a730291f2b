// ConvertThroughTable and ConvertThroughTable16 (convert.h): the portable builds, the scalar
// loops the vector build uses for its heads and tails, and the choice between the builds
// (convert_table_variants.h). Compiled for the baseline target.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "augment/kernels/convert.h"
#include "augment/kernels/convert_table_variants.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace stoker {
namespace table_internal {
namespace {

// One plane of HWC → CHW through the table (element `channel` of each of `pixels` pixels of
// `channels` bytes), 4 floats at a time on x86-64. Streaming, the stores bypass the cache once
// the plane is 16-byte aligned: a float32 sample is 4x its uint8 bytes, written once into a batch
// far larger than the caches, so ordinary stores would first read every line they fill.
void TablePlane(const uint8_t* __restrict src, size_t pixels, size_t channels,
                const float* __restrict t, bool stream, float* __restrict plane) {
  size_t p = 0;
#if defined(__x86_64__)
  for (; p < pixels && reinterpret_cast<uintptr_t>(plane + p) % 16 != 0; ++p) {
    plane[p] = t[src[p * channels]];
  }
  for (; p + 4 <= pixels; p += 4) {
    const uint8_t* s = src + p * channels;
    const __m128 v = _mm_setr_ps(t[s[0]], t[s[channels]], t[s[2 * channels]], t[s[3 * channels]]);
    if (stream) {
      _mm_stream_ps(plane + p, v);
    } else {
      _mm_store_ps(plane + p, v);
    }
  }
#endif
  for (; p < pixels; ++p) plane[p] = t[src[p * channels]];
}

constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

}  // namespace

template <typename T>
void ScalarChw(const uint8_t* src, size_t channels, size_t pixels, size_t first, size_t last,
               const T* table, void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  for (size_t p = first; p < last; ++p) {
    for (size_t c = 0; c < channels; ++c) {
      const T value = table[c * kTableValues + src[p * channels + c]];
      std::memcpy(bytes + (c * pixels + p) * sizeof(T), &value, sizeof(T));
    }
  }
}

template <typename T>
void ScalarHwc(const uint8_t* src, size_t channels, size_t first, size_t last, const T* table,
               void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  for (size_t n = first; n < last; ++n) {
    const T value = table[n % channels * kTableValues + src[n]];
    std::memcpy(bytes + n * sizeof(T), &value, sizeof(T));
  }
}

template void ScalarChw(const uint8_t*, size_t, size_t, size_t, size_t, const float*, void*);
template void ScalarChw(const uint8_t*, size_t, size_t, size_t, size_t, const uint16_t*, void*);
template void ScalarHwc(const uint8_t*, size_t, size_t, size_t, const float*, void*);
template void ScalarHwc(const uint8_t*, size_t, size_t, size_t, const uint16_t*, void*);

void ConvertThroughTablePortable(const ImageView& in, const float* table, OutputLayout layout,
                                 TableStores stores, float* out) {
  const uint8_t* __restrict src = in.pixels<const uint8_t>();
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  for (size_t c = 0; c < channels; ++c) {
    const float* __restrict t = table + c * kTableValues;
    if (layout == OutputLayout::kChw) {
      TablePlane(src + c, pixels, channels, t, stores == TableStores::kStreaming, out + c * pixels);
    } else {
      for (size_t p = 0; p < pixels; ++p) out[p * channels + c] = t[src[p * channels + c]];
    }
  }
#if defined(__x86_64__)
  _mm_sfence();  // The streaming stores are visible before the caller hands `out` on.
#endif
}

void ConvertThroughTable16Portable(const ImageView& in, const uint16_t* table, OutputLayout layout,
                                   TableStores /*stores: ordinary ones only*/, void* out) {
  const uint8_t* src = in.pixels<const uint8_t>();
  auto* bytes = static_cast<uint8_t*>(out);
  const size_t channels = in.shape.channels;
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  const bool chw = layout == OutputLayout::kChw;
  for (size_t c = 0; c < channels; ++c) {
    const uint16_t* t = table + c * kTableValues;
    uint8_t* first = bytes + (chw ? c * pixels : c) * sizeof(uint16_t);
    const size_t step = (chw ? 1 : channels) * sizeof(uint16_t);
    size_t p = 0;
    for (; kLittleEndian && chw && p + 4 <= pixels; p += 4) {  // a plane: 4 entries per store
      const uint8_t* s = src + p * channels + c;
      const uint64_t four = uint64_t{t[s[0]]} | uint64_t{t[s[channels]]} << 16 |
                            uint64_t{t[s[2 * channels]]} << 32 | uint64_t{t[s[3 * channels]]} << 48;
      std::memcpy(first + p * step, &four, sizeof(four));  // entry p at the lowest address
    }
    for (; p < pixels; ++p) {
      std::memcpy(first + p * step, &t[src[p * channels + c]], sizeof(uint16_t));
    }
  }
}

bool CpuHasAvx512Vbmi() {
#if defined(__x86_64__) && defined(STOKER_HAVE_AVX512_TABLE)
  static const bool supported =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  return supported;
#else
  return false;
#endif
}

}  // namespace table_internal

void ConvertThroughTable(const ImageView& in, const float* table, OutputLayout layout, float* out) {
  using table_internal::TableStores;
#if defined(STOKER_HAVE_AVX512_TABLE)
  if (table_internal::CpuHasAvx512Vbmi()) {
    return table_internal::ConvertThroughTableAvx512(in, table, layout, TableStores::kStreaming,
                                                     out);
  }
#endif
  table_internal::ConvertThroughTablePortable(in, table, layout, TableStores::kStreaming, out);
}

void ConvertThroughTable16(const ImageView& in, const uint16_t* table, OutputLayout layout,
                           void* out) {
  using table_internal::TableStores;
#if defined(STOKER_HAVE_AVX512_TABLE)
  if (table_internal::CpuHasAvx512Vbmi()) {
    return table_internal::ConvertThroughTable16Avx512(in, table, layout, TableStores::kStreaming,
                                                       out);
  }
#endif
  table_internal::ConvertThroughTable16Portable(in, table, layout, TableStores::kStreaming, out);
}

}  // namespace stoker
