#include "augment/synthetic_images.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/counter_rng.h"

namespace stoker {
std::vector<uint8_t> NaturalImage(uint32_t height, uint32_t width, uint32_t channels,
                                  uint64_t seed) {
  CounterRng rng(seed);
  std::vector<float> base(channels), slope_y(channels), slope_x(channels);
  for (uint32_t c = 0; c < channels; ++c) {
    base[c] = rng.UniformFloat(40, 200);
    slope_y[c] = rng.UniformFloat(-0.3f, 0.3f);
    slope_x[c] = rng.UniformFloat(-0.3f, 0.3f);
  }
  // A few discs of flat colour over a gradient, plus mild noise.
  constexpr int kDiscs = 6;
  float cy[kDiscs], cx[kDiscs], r2[kDiscs], shade[kDiscs];
  for (int d = 0; d < kDiscs; ++d) {
    cy[d] = rng.UniformFloat(0, static_cast<float>(height));
    cx[d] = rng.UniformFloat(0, static_cast<float>(width));
    const float r = rng.UniformFloat(10, static_cast<float>(std::min(height, width)) / 3);
    r2[d] = r * r;
    shade[d] = rng.UniformFloat(-90, 90);
  }
  std::vector<uint8_t> pixels(size_t{height} * width * channels);
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      float offset = 0;
      for (int d = 0; d < kDiscs; ++d) {
        const float dy = static_cast<float>(y) - cy[d], dx = static_cast<float>(x) - cx[d];
        if (dy * dy + dx * dx < r2[d]) offset += shade[d] * (d % 2 == 0 ? 1.0f : 0.6f);
      }
      for (uint32_t c = 0; c < channels; ++c) {
        const float value = base[c] + slope_y[c] * static_cast<float>(y) +
                            slope_x[c] * static_cast<float>(x) + offset * (1.0f - 0.2f * c) +
                            rng.UniformFloat(-8, 8);
        pixels[(size_t{y} * width + x) * channels + c] =
            static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
      }
    }
  }
  return pixels;
}

std::vector<uint8_t> EncodeJpeg(const ImageView& image, int quality, bool progressive,
                                ChromaSubsampling subsampling) {
  tjhandle handle = tjInitCompress();
  if (handle == nullptr) return {};
  const bool color = image.shape.channels == 3;
  constexpr int kTjSubsampling[] = {TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411};
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): TurboJPEG's type.
  const int flags = progressive ? TJFLAG_PROGRESSIVE : 0;
  const int rc = tjCompress2(
      handle, image.pixels<const unsigned char>(), static_cast<int>(image.shape.width), 0,
      static_cast<int>(image.shape.height), color ? TJPF_RGB : TJPF_GRAY, &jpeg, &size,
      color ? kTjSubsampling[static_cast<int>(subsampling)] : TJSAMP_GRAY, quality, flags);
  std::vector<uint8_t> bytes;
  if (rc == 0) bytes.assign(jpeg, jpeg + size);
  tjFree(jpeg);
  tjDestroy(handle);
  return bytes;
}

}  // namespace stoker
