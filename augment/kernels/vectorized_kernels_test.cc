// The kernels built on the vectorized pixel loops (pixel_loops.h) — AffineWarp, PerspectiveWarp,
// AdjustSharpness, AdjustContrast, AdjustSaturation, AdjustBrightness — against scalar
// references written out per pixel as torchvision computes them (the references are the
// kernels' code before they were vectorized), bit for bit: uint8 and float32, 1, 3 and 4
// channels, 1x1 and odd sizes, nearest and bilinear, with and without fill. The loops
// themselves are checked per build in pixel_loops_test.cc.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "augment/kernels/color.h"
#include "augment/kernels/tone.h"
#include "augment/kernels/warp.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"
#include "image/image.h"

namespace stoker {
namespace {

template <typename T>
T ReferenceStore(float v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::nearbyint(v));
  } else {
    return v;
  }
}

// grid_sample (align_corners=False, zero padding, torchvision's fill mask) per output pixel;
// `grid(x, y, &gx, &gy)` gives the normalized grid point of the output pixel centred at (x, y).
template <typename T, typename Grid>
void ReferenceWarp(const ImageView& in, Grid grid, bool bilinear, const float* fill,
                   const ImageView& out) {
  const int w = static_cast<int>(in.shape.width), h = static_cast<int>(in.shape.height);
  const size_t channels = in.shape.channels;
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  for (int i = 0; i < h; ++i) {
    for (int j = 0; j < w; ++j) {
      float gx, gy;
      grid(static_cast<float>(j) + 0.5f, static_cast<float>(i) + 0.5f, &gx, &gy);
      const float ix = std::fma(gx + 1.0f, static_cast<float>(w) / 2, -0.5f);
      const float iy = std::fma(gy + 1.0f, static_cast<float>(h) / 2, -0.5f);
      T* pixel = dst + (static_cast<size_t>(i) * w + j) * channels;
      if (!bilinear) {
        const int nx = static_cast<int>(std::nearbyint(ix));
        const int ny = static_cast<int>(std::nearbyint(iy));
        const bool in_bounds = nx >= 0 && nx < w && ny >= 0 && ny < h;
        for (size_t c = 0; c < channels; ++c) {
          const float v =
              in_bounds ? static_cast<float>(src[(static_cast<size_t>(ny) * w + nx) * channels + c])
                        : (fill != nullptr ? fill[c] : 0.0f);
          pixel[c] = ReferenceStore<T>(v);
        }
        continue;
      }
      const float x0 = std::floor(ix), y0 = std::floor(iy);
      const float wx[2] = {1.0f - (ix - x0), ix - x0}, wy[2] = {1.0f - (iy - y0), iy - y0};
      for (size_t c = 0; c < channels; ++c) {
        float sum = 0.0f, inside = 0.0f;
        for (int b = 0; b < 2; ++b) {
          for (int a = 0; a < 2; ++a) {
            const int x = static_cast<int>(x0) + a, y = static_cast<int>(y0) + b;
            if (x < 0 || x >= w || y < 0 || y >= h) continue;
            const float k = wx[a] * wy[b];
            sum += k * static_cast<float>(src[(static_cast<size_t>(y) * w + x) * channels + c]);
            inside += k;
          }
        }
        if (fill != nullptr) sum = sum * inside + (1.0f - inside) * fill[c];
        pixel[c] = ReferenceStore<T>(sum);
      }
    }
  }
}

template <typename T>
void ReferenceAffine(const ImageView& in, const std::array<double, 6>& m, bool bilinear,
                     const float* fill, const ImageView& out) {
  const float w = static_cast<float>(in.shape.width), h = static_cast<float>(in.shape.height);
  float r[6];
  for (int k = 0; k < 3; ++k) {
    r[k] = static_cast<float>(m[k]) / (0.5f * w);
    r[3 + k] = static_cast<float>(m[3 + k]) / (0.5f * h);
  }
  auto grid = [&](float px, float py, float* gx, float* gy) {
    const float x = -w * 0.5f + px, y = -h * 0.5f + py;
    *gx = x * r[0] + y * r[1] + r[2];
    *gy = x * r[3] + y * r[4] + r[5];
  };
  ReferenceWarp<T>(in, grid, bilinear, fill, out);
}

template <typename T>
void ReferencePerspective(const ImageView& in, const std::array<double, 8>& c, bool bilinear,
                          const float* fill, const ImageView& out) {
  const float w = static_cast<float>(in.shape.width), h = static_cast<float>(in.shape.height);
  float t[6];
  for (int k = 0; k < 3; ++k) {
    t[k] = static_cast<float>(c[k]) / (0.5f * w);
    t[3 + k] = static_cast<float>(c[3 + k]) / (0.5f * h);
  }
  const float c6 = static_cast<float>(c[6]), c7 = static_cast<float>(c[7]);
  auto grid = [&](float x, float y, float* gx, float* gy) {
    const float d = x * c6 + y * c7 + 1.0f;
    *gx = (x * t[0] + y * t[1] + t[2]) / d - 1.0f;
    *gy = (x * t[3] + y * t[4] + t[5]) / d - 1.0f;
  };
  ReferenceWarp<T>(in, grid, bilinear, fill, out);
}

template <typename T>
std::vector<T> RandomImage(const ImageShape& shape, uint64_t seed) {
  CounterRng rng(seed);
  std::vector<T> v(shape.elements());
  for (T& x : v) {
    if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(rng.UniformInt(256));
    } else {
      x = rng.UniformFloat();
    }
  }
  return v;
}

constexpr ImageShape kShapes[] = {{1, 1, 1}, {1, 1, 3},   {2, 3, 3},   {7, 5, 1},
                                  {5, 8, 4}, {37, 41, 3}, {64, 301, 3}};

// The transforms of RandAugment's warps (shears about the corner, integer translations,
// rotations, a quarter turn whose nearest samples fall on ties) and a general affine.
std::vector<std::array<double, 6>> Matrices(const ImageShape& shape) {
  const double cx = -0.5 * shape.width, cy = -0.5 * shape.height;
  return {InverseAffineMatrix(0, 0, 0, 1, 16.7, 0, cx, cy),
          InverseAffineMatrix(0, 0, 0, 1, 0, -16.7, cx, cy),
          InverseAffineMatrix(0, 5, 0, 1, 0, 0),
          InverseAffineMatrix(0, 0, -3, 1, 0, 0),
          InverseAffineMatrix(-90, 0, 0, 1, 0, 0),
          InverseAffineMatrix(27, 0, 0, 1, 0, 0),
          InverseAffineMatrix(-13, 2.5, -1.5, 0.8, 7, -4, 1, 2)};
}

template <typename T>
void ExpectWarpsEqualReference() {
  for (ImageShape shape : kShapes) {
    shape.type = std::is_integral_v<T> ? PixelType::kUint8 : PixelType::kFloat32;
    const std::vector<T> in = RandomImage<T>(shape, shape.width * 100 + shape.channels);
    const float fill[4] = {12.5f, 200.0f, 3.5f, 99.0f};
    const ImageView view{const_cast<T*>(in.data()), shape};
    for (bool bilinear : {false, true}) {
      for (const float* f : {static_cast<const float*>(nullptr), fill}) {
        for (const std::array<double, 6>& m : Matrices(shape)) {
          std::vector<T> got(in.size()), want(in.size());
          AffineWarp(view, m, bilinear, f, ImageView{got.data(), shape});
          ReferenceAffine<T>(view, m, bilinear, f, ImageView{want.data(), shape});
          ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0)
              << shape.height << "x" << shape.width << "x" << shape.channels << " bilinear "
              << bilinear << " fill " << (f != nullptr) << " matrix " << m[0] << " " << m[1];
        }
        const double w = shape.width + 4.0, h = shape.height + 4.0;  // any non-degenerate quad
        const std::array<double, 8> start = {0, 0, w, 0, w, h, 0, h};
        std::array<double, 8> end = start, c;
        for (size_t k = 0; k < 8; ++k) end[k] += (k % 3 == 0 ? 0.3 : -0.2) * (1.0 + k % 2);
        ASSERT_TRUE(PerspectiveCoefficients(start, end, &c));
        std::vector<T> got(in.size()), want(in.size());
        PerspectiveWarp(view, c, bilinear, f, ImageView{got.data(), shape});
        ReferencePerspective<T>(view, c, bilinear, f, ImageView{want.data(), shape});
        ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0)
            << "perspective " << shape.height << "x" << shape.width << "x" << shape.channels;
      }
    }
  }
}

TEST(VectorizedKernelsTest, WarpsEqualTheScalarReferenceUint8) {
  ExpectWarpsEqualReference<uint8_t>();
}

TEST(VectorizedKernelsTest, WarpsEqualTheScalarReferenceFloat) {
  ExpectWarpsEqualReference<float>();
}

// torchvision's adjust_sharpness on uint8, per value (border rows and columns kept).
std::vector<uint8_t> ReferenceSharpness(const std::vector<uint8_t>& in, const ImageShape& shape,
                                        float factor) {
  std::vector<uint8_t> out = in;
  if (shape.height <= 2 || shape.width <= 2) return out;
  const size_t channels = shape.channels, row = size_t{shape.width} * channels;
  const float keep = factor, mix = static_cast<float>(1.0 - factor);
  for (size_t y = 1; y + 1 < shape.height; ++y) {
    for (size_t i = channels; i < row - channels; ++i) {
      float sum = 0.0f;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const float v = in[(y + dy) * row + i + dx * static_cast<ptrdiff_t>(channels)];
          sum += v * (dy == 0 && dx == 0 ? 5.0f / 13.0f : 1.0f / 13.0f);
        }
      }
      const float v = keep * static_cast<float>(in[y * row + i]) + mix * std::nearbyint(sum);
      out[y * row + i] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
    }
  }
  return out;
}

TEST(VectorizedKernelsTest, Uint8SharpnessEqualsTheScalarReference) {
  for (ImageShape shape : kShapes) {
    shape.type = PixelType::kUint8;
    const std::vector<uint8_t> in = RandomImage<uint8_t>(shape, shape.height + shape.width);
    for (float factor : {0.0f, 0.1f, 1.0f, 1.9f, 5.0f}) {
      std::vector<uint8_t> out(in.size());
      AdjustSharpness(ImageView{const_cast<uint8_t*>(in.data()), shape}, factor,
                      ImageView{out.data(), shape});
      ASSERT_EQ(out, ReferenceSharpness(in, shape, factor))
          << shape.height << "x" << shape.width << "x" << shape.channels << " factor " << factor;
    }
  }
}

// torchvision's autocontrast on uint8 per channel: (x - min) * (255 / (max - min)) in float32,
// clamped, truncated; a constant channel kept.
TEST(VectorizedKernelsTest, Uint8AutocontrastEqualsTheScalarReference) {
  for (ImageShape shape : kShapes) {
    shape.type = PixelType::kUint8;
    std::vector<uint8_t> in = RandomImage<uint8_t>(shape, 5 + shape.width);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(30 + in[i] / 3);
    if (shape.channels > 1) {
      for (size_t i = 1; i < in.size(); i += shape.channels) in[i] = 40;  // a constant channel
    }
    std::vector<uint8_t> out(in.size()), same = in;
    Autocontrast(ImageView{in.data(), shape}, ImageView{out.data(), shape});
    Autocontrast(ImageView{same.data(), shape}, ImageView{same.data(), shape});
    for (size_t c = 0; c < shape.channels; ++c) {
      uint8_t low = 255, high = 0;
      for (size_t i = c; i < in.size(); i += shape.channels) {
        low = std::min(low, in[i]);
        high = std::max(high, in[i]);
      }
      const float scale = high == low ? 1.0f : 255.0f / (static_cast<float>(high) - low);
      const float offset = high == low ? 0.0f : static_cast<float>(low);
      for (size_t i = c; i < in.size(); i += shape.channels) {
        const float v = (static_cast<float>(in[i]) - offset) * scale;
        ASSERT_EQ(out[i], static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f)))
            << shape.height << "x" << shape.width << "x" << shape.channels << " at " << i;
      }
    }
    EXPECT_EQ(same, out);
  }
}

// torchvision's (and PIL's) equalize per channel, written out; 5 channels: two groups of the
// kernel's passes.
TEST(VectorizedKernelsTest, EqualizeEqualsTheScalarReference) {
  for (ImageShape shape :
       {ImageShape{1, 1, 1}, ImageShape{7, 5, 1}, ImageShape{37, 41, 3}, ImageShape{9, 11, 5}}) {
    std::vector<uint8_t> in = RandomImage<uint8_t>(shape, 11 + shape.width);
    for (size_t i = 0; i < in.size(); i += 2) in[i] = static_cast<uint8_t>(in[i] / 4 + 100);
    std::vector<uint8_t> out(in.size()), same = in;
    Equalize(ImageView{in.data(), shape}, ImageView{out.data(), shape});
    Equalize(ImageView{same.data(), shape}, ImageView{same.data(), shape});
    const size_t pixels = size_t{shape.height} * shape.width;
    for (size_t c = 0; c < shape.channels; ++c) {
      uint64_t histogram[256] = {};
      for (size_t i = 0; i < pixels; ++i) ++histogram[in[i * shape.channels + c]];
      int highest = 255;
      while (histogram[highest] == 0) --highest;
      const uint64_t step = (pixels - histogram[highest]) / 255;
      for (size_t i = 0; i < pixels; ++i) {
        const uint8_t v = in[i * shape.channels + c];
        uint64_t below = 0;
        for (int u = 0; u < v; ++u) below += histogram[u];
        const uint8_t want =
            step == 0 ? v
                      : static_cast<uint8_t>(std::min<uint64_t>(255, (below + step / 2) / step));
        ASSERT_EQ(out[i * shape.channels + c], want) << "channel " << c << " pixel " << i;
      }
    }
    EXPECT_EQ(same, out);
  }
}

// torchvision's _blend of uint8 with the mean gray (contrast), its own gray (saturation) or 0
// (brightness), per value; gray images are their own gray.
TEST(VectorizedKernelsTest, Uint8BlendsEqualTheScalarReference) {
  auto blend = [](uint8_t x, float other, float f) {
    const float v = f * static_cast<float>(x) + (1.0f - f) * other;
    return static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
  };
  auto gray = [](const uint8_t* p, size_t channels) {
    if (channels == 1) return static_cast<float>(p[0]);
    return static_cast<float>(static_cast<uint8_t>(0.2989f * p[0] + 0.587f * p[1] + 0.114f * p[2]));
  };
  for (ImageShape shape : kShapes) {
    if (shape.channels == 4) continue;  // the colour kernels take 1 or 3 channels
    shape.type = PixelType::kUint8;
    const std::vector<uint8_t> in = RandomImage<uint8_t>(shape, 77 + shape.width);
    const size_t channels = shape.channels, pixels = size_t{shape.height} * shape.width;
    double sum = 0;
    for (size_t i = 0; i < pixels; ++i) sum += gray(&in[i * channels], channels);
    const float mean = static_cast<float>(sum / static_cast<double>(pixels));
    for (float factor : {0.0f, 0.6f, 1.0f, 1.4f}) {
      std::vector<uint8_t> contrast = in, saturation(in.size()), brightness(in.size());
      const ImageView view{const_cast<uint8_t*>(in.data()), shape};
      AdjustContrast(ImageView{contrast.data(), shape}, factor, ImageView{contrast.data(), shape});
      AdjustSaturation(view, factor, ImageView{saturation.data(), shape});
      AdjustBrightness(view, factor, ImageView{brightness.data(), shape});
      for (size_t i = 0; i < pixels; ++i) {
        const uint8_t* p = &in[i * channels];
        for (size_t c = 0; c < channels; ++c) {
          ASSERT_EQ(contrast[i * channels + c], blend(p[c], mean, factor)) << i;
          ASSERT_EQ(saturation[i * channels + c], blend(p[c], gray(p, channels), factor)) << i;
          ASSERT_EQ(brightness[i * channels + c], blend(p[c], 0.0f, factor)) << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace stoker
