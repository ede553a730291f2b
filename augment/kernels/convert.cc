#include "augment/kernels/convert.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "augment/kernels/convert_table_variants.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace stoker {
namespace {

template <typename To, typename From>
struct ValueCast {
  static To Apply(From v) { return static_cast<To>(v); }
};

template <>
struct ValueCast<uint8_t, float> {
  static uint8_t Apply(float v) {
    // Written so that NaN fails both comparisons and ends at 0.
    float clamped = v > 0.0f ? v : 0.0f;
    clamped = clamped < 255.0f ? clamped : 255.0f;
    // Adding and subtracting 1.5 * 2^23 rounds to an integer, ties to even, in the default
    // rounding mode (exact for 0 <= clamped <= 255).
    constexpr float kMagic = 12582912.0f;
    const float rounded = (clamped + kMagic) - kMagic;
    return static_cast<uint8_t>(static_cast<int>(rounded));
  }
};

template <typename From, typename To>
void ConvertHwc(const From* __restrict src, size_t n, To* __restrict dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = ValueCast<To, From>::Apply(src[i]);
}

template <typename From, typename To>
void ConvertChw(const From* __restrict src, size_t pixels, size_t channels, To* __restrict dst) {
  for (size_t c = 0; c < channels; ++c) {
    To* plane = dst + c * pixels;
    for (size_t p = 0; p < pixels; ++p)
      plane[p] = ValueCast<To, From>::Apply(src[p * channels + c]);
  }
}

template <typename From, typename To>
void Convert(const ImageView& in, OutputLayout layout, void* out) {
  const From* src = in.pixels<const From>();
  To* dst = static_cast<To*>(out);
  if (layout == OutputLayout::kHwc) {
    ConvertHwc(src, in.shape.elements(), dst);
  } else {
    ConvertChw(src, size_t{in.shape.height} * in.shape.width, in.shape.channels, dst);
  }
}

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

}  // namespace

namespace table_internal {

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

void ConvertThroughTable(const ImageView& in, const float* table, OutputLayout layout,
                         TableStores stores, float* out) {
#if defined(STOKER_HAVE_AVX512_TABLE)
  if (table_internal::CpuHasAvx512Vbmi()) {
    return table_internal::ConvertThroughTableAvx512(in, table, layout, stores, out);
  }
#endif
  table_internal::ConvertThroughTablePortable(in, table, layout, stores, out);
}

void ConvertThroughTable(const ImageView& in, const float* table, OutputLayout layout, float* out) {
  ConvertThroughTable(in, table, layout,
                      layout == OutputLayout::kChw ? TableStores::kStreaming : TableStores::kCached,
                      out);
}

void ConvertImage(const ImageView& in, OutputLayout layout, PixelType out_type, void* out) {
  const bool in_u8 = in.shape.type == PixelType::kUint8;
  const bool out_u8 = out_type == PixelType::kUint8;
  if (layout == OutputLayout::kHwc && in.shape.type == out_type) {
    std::memcpy(out, in.data, in.shape.bytes());
  } else if (in_u8 && out_u8) {
    Convert<uint8_t, uint8_t>(in, layout, out);
  } else if (in_u8) {
    Convert<uint8_t, float>(in, layout, out);
  } else if (out_u8) {
    Convert<float, uint8_t>(in, layout, out);
  } else {
    Convert<float, float>(in, layout, out);
  }
}

}  // namespace stoker
