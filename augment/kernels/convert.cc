#include "augment/kernels/convert.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

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

}  // namespace

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
