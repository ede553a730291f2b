#include "trainer_client/device/convert.h"

namespace stoker {

ChannelAffine MakeChannelAffine(const std::vector<float>& mean, const std::vector<float>& std,
                                int channels) {
  ChannelAffine affine{};
  for (int c = 0; c < channels; ++c) {
    const float m = mean.empty() ? 0.0f : mean[c];
    const float s = std.empty() ? 1.0f : std[c];
    affine.scale[c] = 1.0f / (255.0f * s);
    affine.shift[c] = -m / s;
  }
  return affine;
}

void ConvertHwcToChwOnHost(const uint8_t* in, int64_t n, int64_t h, int64_t w, int64_t c,
                           const ChannelAffine& affine, float* out) {
  const int64_t plane = h * w;
  for (int64_t image = 0; image < n; ++image) {
    const uint8_t* src = in + image * plane * c;
    float* dst = out + image * plane * c;
    for (int64_t ch = 0; ch < c; ++ch) {
      const float scale = affine.scale[ch];
      const float shift = affine.shift[ch];
      float* dst_plane = dst + ch * plane;
      for (int64_t p = 0; p < plane; ++p) dst_plane[p] = src[p * c + ch] * scale + shift;
    }
  }
}

}  // namespace stoker
