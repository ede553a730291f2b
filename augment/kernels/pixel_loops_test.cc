// One build of the pixel loops (pixel_loops.h), named by STOKER_TESTED_BUILD ("portable",
// "avx2", "avx512"; one test binary per build, augment/CMakeLists.txt), against the scalar
// formula each loop's comment states, value by value and bit for bit: lengths that leave every
// vector remainder, 1 value, empty, in place, rounding ties, coordinates outside the image and
// beyond the clamp. Skipped (exit 77, shown as skipped) where this CPU or build lacks the build.

#include "augment/kernels/pixel_loops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "augment/kernels/color.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"

#ifndef STOKER_TESTED_BUILD
#error "STOKER_TESTED_BUILD names the build under test"
#endif

namespace stoker {
namespace pixel_loops {
namespace {

const PixelLoops* TestedBuild() {
  const std::string name = STOKER_TESTED_BUILD;
  if (name == "portable") return &PortablePixelLoops();
  if (name == "avx2") return Avx2PixelLoops();
  if (name == "avx512") return Avx512PixelLoops();
  return nullptr;
}

class PixelLoopsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loops_ = TestedBuild();
    if (loops_ == nullptr) GTEST_SKIP() << "no " STOKER_TESTED_BUILD " build on this CPU";
    ASSERT_STREQ(loops_->name, STOKER_TESTED_BUILD);
  }

  const PixelLoops* loops_ = nullptr;
};

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed) {
  CounterRng rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = static_cast<uint8_t>(rng.UniformInt(256));
  return v;
}

uint8_t ClampInt(float v) {
  return static_cast<uint8_t>(std::min(std::max(static_cast<int32_t>(v), 0), 255));
}

float GrayTruncated(const uint8_t* p) {
  return static_cast<float>(static_cast<int32_t>(kRed * static_cast<float>(p[0]) +
                                                 kGreen * static_cast<float>(p[1]) +
                                                 kBlue * static_cast<float>(p[2])));
}

constexpr size_t kLengths[] = {0, 1, 2, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 1000};
constexpr float kFactors[] = {0.0f, 0.37f, 0.6f, 1.0f, 1.4f, 1.9f, 3.0f};

TEST_F(PixelLoopsTest, BlendConstantEqualsTheFormulaOutOfPlaceAndInPlace) {
  for (size_t n : kLengths) {
    const std::vector<uint8_t> in = RandomBytes(n, n);
    for (float factor : kFactors) {
      for (float other : {0.0f, 17.0f, 127.4f, 255.0f}) {
        const float offset = (1.0f - factor) * other;
        std::vector<uint8_t> out(n, 1), same = in;
        loops_->blend_constant_u8(in.data(), n, factor, offset, out.data());
        loops_->blend_constant_u8(same.data(), n, factor, offset, same.data());
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out[i], ClampInt(factor * static_cast<float>(in[i]) + offset))
              << "n " << n << " factor " << factor << " i " << i;
        }
        EXPECT_EQ(same, out);
      }
    }
  }
}

TEST_F(PixelLoopsTest, GraySumEqualsTheFormulaAcrossItsBlocks) {
  for (size_t pixels : {size_t{0}, size_t{1}, size_t{5}, size_t{33}, size_t{65536 + 37}}) {
    const std::vector<uint8_t> in = RandomBytes(pixels * 3, 100 + pixels);
    uint64_t expected = 0;
    for (size_t i = 0; i < pixels; ++i)
      expected += static_cast<uint64_t>(GrayTruncated(&in[i * 3]));
    EXPECT_EQ(loops_->gray_sum_rgb_u8(in.data(), pixels), expected) << pixels;
  }
  const std::vector<uint8_t> white(3 * 70000, 255);  // every block at its largest
  EXPECT_EQ(loops_->gray_sum_rgb_u8(white.data(), 70000), uint64_t{254} * 70000);
}

TEST_F(PixelLoopsTest, BlendGrayEqualsTheFormulaOutOfPlaceAndInPlace) {
  for (size_t pixels : kLengths) {
    const std::vector<uint8_t> in = RandomBytes(pixels * 3, 200 + pixels);
    for (float factor : kFactors) {
      std::vector<uint8_t> out(in.size(), 1), same = in;
      loops_->blend_gray_rgb_u8(in.data(), pixels, factor, out.data());
      loops_->blend_gray_rgb_u8(same.data(), pixels, factor, same.data());
      for (size_t i = 0; i < pixels; ++i) {
        const float gray = GrayTruncated(&in[i * 3]);
        for (int c = 0; c < 3; ++c) {
          const float v = factor * static_cast<float>(in[i * 3 + c]) + (1.0f - factor) * gray;
          ASSERT_EQ(out[i * 3 + c], ClampInt(v)) << "pixel " << i << " factor " << factor;
        }
      }
      EXPECT_EQ(same, out);
    }
  }
}

// torchvision's _rgb2hsv, hue shift and _hsv2rgb of one float32 pixel, as written in its
// tensor code (the scalar code AdjustHue ran before it was vectorized).
void ReferenceShiftHue(const float* rgb, float hue_factor, float* out) {
  const float r = rgb[0], g = rgb[1], b = rgb[2];
  const float maxc = std::max({r, g, b}), minc = std::min({r, g, b});
  const bool eqc = maxc == minc;
  const float cr = maxc - minc;
  const float s = cr / (eqc ? 1.0f : maxc);
  const float divisor = eqc ? 1.0f : cr;
  const float rc = (maxc - r) / divisor, gc = (maxc - g) / divisor, bc = (maxc - b) / divisor;
  float h = maxc == r ? bc - gc : maxc == g ? 2.0f + rc - bc : 4.0f + gc - rc;
  h = std::fmod(h / 6.0f + 1.0f, 1.0f);
  h = h + hue_factor;
  h = h - std::floor(h);  // Python's % 1.0
  const float v = maxc;
  const float sector = std::floor(h * 6.0f);
  const float f = h * 6.0f - sector;
  const float p = std::clamp(v * (1.0f - s), 0.0f, 1.0f);
  const float q = std::clamp(v * (1.0f - s * f), 0.0f, 1.0f);
  const float t = std::clamp(v * (1.0f - s * (1.0f - f)), 0.0f, 1.0f);
  const int i = ((static_cast<int>(sector) % 6) + 6) % 6;
  const float table[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
  std::copy(table[i], table[i] + 3, out);
}

// Every RGB colour (every third red value for most factors): x / 255, the reference, x * 255.999
// truncated (convert_image_dtype).
TEST_F(PixelLoopsTest, ShiftHueUint8EqualsTheReferenceOnEveryColour) {
  constexpr size_t kSlice = 256 * 256;  // one red value, every green and blue
  std::vector<uint8_t> in(kSlice * 3), out(kSlice * 3);
  for (float hue : {0.1f, -0.37f, 0.0f, 0.5f, -0.5f, 0.013f}) {
    const int step = hue == 0.1f || hue == -0.37f ? 1 : 3;
    for (int red = 0; red < 256; red += step) {
      for (size_t i = 0; i < kSlice; ++i) {
        in[i * 3] = static_cast<uint8_t>(red);
        in[i * 3 + 1] = static_cast<uint8_t>(i >> 8);
        in[i * 3 + 2] = static_cast<uint8_t>(i & 255);
      }
      loops_->shift_hue_rgb_u8(in.data(), kSlice, hue, out.data());
      for (size_t i = 0; i < kSlice; ++i) {
        float rgb[3], want[3];
        for (int c = 0; c < 3; ++c) rgb[c] = static_cast<float>(in[i * 3 + c]) / 255.0f;
        ReferenceShiftHue(rgb, hue, want);
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(out[i * 3 + c], static_cast<uint8_t>(want[c] * 255.999f))
              << "hue " << hue << " rgb " << red << "," << (i >> 8) << "," << (i & 255);
        }
      }
    }
  }
  std::vector<uint8_t> same(in.begin(), in.begin() + 3 * 301);  // in place, an odd count
  std::vector<uint8_t> separate(same.size());
  loops_->shift_hue_rgb_u8(same.data(), 301, 0.2f, separate.data());
  loops_->shift_hue_rgb_u8(same.data(), 301, 0.2f, same.data());
  EXPECT_EQ(same, separate);
}

// float32 pixels in [0, 1), gray ones, and values outside [0, 1] (a normalized image's).
TEST_F(PixelLoopsTest, ShiftHueFloatEqualsTheReference) {
  CounterRng rng(99);
  for (size_t pixels : kLengths) {
    std::vector<float> in(pixels * 3), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = i % 7 == 0 ? rng.UniformFloat(-2.5f, 2.5f) : rng.UniformFloat();
    }
    if (pixels > 2) std::fill(in.begin() + 3, in.begin() + 6, 0.25f);  // gray: s = 0
    for (float hue : {0.1f, -0.5f, 0.5f, 0.0f, -0.21f}) {
      std::vector<float> same = in;
      loops_->shift_hue_rgb_f32(in.data(), pixels, hue, out.data());
      loops_->shift_hue_rgb_f32(same.data(), pixels, hue, same.data());
      for (size_t i = 0; i < pixels; ++i) {
        float want[3];
        ReferenceShiftHue(&in[i * 3], hue, want);
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(std::memcmp(&out[i * 3 + c], &want[c], sizeof(float)), 0)
              << "pixel " << i << " hue " << hue << ": " << out[i * 3 + c] << " vs " << want[c];
        }
      }
      EXPECT_TRUE(out.empty() ||  // memcmp takes no null pointer, even for 0 bytes
                  std::memcmp(same.data(), out.data(), out.size() * sizeof(float)) == 0);
    }
  }
}

TEST_F(PixelLoopsTest, MinMaxPerChannel) {
  for (size_t channels : {size_t{1}, size_t{3}}) {
    for (size_t pixels : {size_t{1}, size_t{2}, size_t{16}, size_t{17}, size_t{50}, size_t{1001}}) {
      std::vector<uint8_t> in = RandomBytes(pixels * channels, pixels + channels);
      for (uint8_t& v : in) v = static_cast<uint8_t>(20 + v / 2);  // neither 0 nor 255 present
      in.back() = 3;  // the extreme in the tail, past the last whole block of lanes
      uint8_t low[3], high[3];
      loops_->min_max_u8(in.data(), pixels, channels, low, high);
      for (size_t c = 0; c < channels; ++c) {
        uint8_t want_low = 255, want_high = 0;
        for (size_t i = c; i < in.size(); i += channels) {
          want_low = std::min(want_low, in[i]);
          want_high = std::max(want_high, in[i]);
        }
        EXPECT_EQ(low[c], want_low) << pixels << " pixels, channel " << c;
        EXPECT_EQ(high[c], want_high) << pixels << " pixels, channel " << c;
      }
    }
  }
}

TEST_F(PixelLoopsTest, ScaleOffsetEqualsTheFormulaOutOfPlaceAndInPlace) {
  const float offset[3] = {0.0f, 17.0f, 200.0f}, scale[3] = {1.0f, 255.0f / 221.0f, 3.7f};
  for (size_t channels : {size_t{1}, size_t{3}}) {
    for (size_t pixels : kLengths) {
      const std::vector<uint8_t> in = RandomBytes(pixels * channels, 300 + pixels);
      std::vector<uint8_t> out(in.size(), 1), same = in;
      loops_->scale_offset_u8(in.data(), pixels, channels, offset, scale, out.data());
      loops_->scale_offset_u8(same.data(), pixels, channels, offset, scale, same.data());
      for (size_t i = 0; i < in.size(); ++i) {
        const float v = (static_cast<float>(in[i]) - offset[i % channels]) * scale[i % channels];
        ASSERT_EQ(out[i], static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f))) << i;
      }
      EXPECT_EQ(same, out);
    }
  }
}

TEST_F(PixelLoopsTest, SharpenRowEqualsTheFormula) {
  constexpr float kSide = 1.0f / 13.0f, kCentre = 5.0f / 13.0f;
  // 5 channels: wider than the float rows' halo, the bytes are read directly.
  for (size_t channels : {size_t{1}, size_t{3}, size_t{4}, size_t{5}}) {
    for (size_t width :
         {size_t{3}, size_t{4}, size_t{5}, size_t{17}, size_t{38}, size_t{224}, size_t{700}}) {
      const size_t stride = width * channels;
      const std::vector<uint8_t> rows = RandomBytes(3 * stride, width * 10 + channels);
      const uint8_t* row = rows.data() + stride;
      for (float factor : kFactors) {
        const float keep = factor, mix = static_cast<float>(1.0 - factor);
        std::vector<uint8_t> out(stride, 7);
        loops_->sharpen_row_u8(row, stride, channels, channels, stride - channels, keep, mix,
                               out.data());
        for (size_t i = 0; i < stride; ++i) {
          if (i < channels || i >= stride - channels) {
            ASSERT_EQ(out[i], 7) << "a border value was written";
            continue;
          }
          float sum = 0.0f;
          for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
              const float v = static_cast<float>(row[i + dy * static_cast<ptrdiff_t>(stride) +
                                                     dx * static_cast<ptrdiff_t>(channels)]);
              sum += v * (dy == 0 && dx == 0 ? kCentre : kSide);
            }
          }
          const float v = keep * static_cast<float>(row[i]) + mix * std::nearbyint(sum);
          ASSERT_EQ(out[i], static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f)))
              << "width " << width << " channels " << channels << " i " << i;
        }
      }
    }
  }
}

float Clamped(float v) { return std::min(std::max(v, -4194304.0f), 4194304.0f); }

// Coordinates of a chunk of output pixels against the formulas, for affine and perspective
// transforms drawn at random (and a 90-degree rotation, whose samples fall on ties).
TEST_F(PixelLoopsTest, CoordinateRowsEqualTheFormulas) {
  CounterRng rng(7);
  for (int width : {1, 2, 7, 224, 301}) {
    for (int height : {1, 5, 224}) {
      const float w = static_cast<float>(width), h = static_cast<float>(height);
      float r[6] = {0, -2.0f / w, 0, 2.0f / h, 0, 0};  // a quarter turn
      for (int trial = 0; trial < 4; ++trial) {
        const int row = static_cast<int>(rng.UniformInt(static_cast<uint32_t>(height)));
        const int first = static_cast<int>(rng.UniformInt(static_cast<uint32_t>(width)));
        const int n = width - first;
        std::vector<float> ix(n), iy(n), px(n), py(n);
        loops_->affine_coords_row(r, width, height, row, first, n, ix.data(), iy.data());
        const float t[6] = {rng.UniformFloat(-2, 2), rng.UniformFloat(-2, 2), rng.UniformFloat(),
                            rng.UniformFloat(-2, 2), rng.UniformFloat(-2, 2), rng.UniformFloat()};
        const float c6 = rng.UniformFloat(-0.01f, 0.01f), c7 = rng.UniformFloat(-0.01f, 0.01f);
        loops_->perspective_coords_row(t, c6, c7, width, height, row, first, n, px.data(),
                                       py.data());
        for (int k = 0; k < n; ++k) {
          const float x = -w * 0.5f + (static_cast<float>(first + k) + 0.5f);
          const float y = -h * 0.5f + (static_cast<float>(row) + 0.5f);
          const float gx = x * r[0] + y * r[1] + r[2], gy = x * r[3] + y * r[4] + r[5];
          ASSERT_EQ(ix[k], Clamped(std::fma(gx + 1.0f, w / 2, -0.5f))) << k;
          ASSERT_EQ(iy[k], Clamped(std::fma(gy + 1.0f, h / 2, -0.5f))) << k;
          const float u = static_cast<float>(first + k) + 0.5f;
          const float v = static_cast<float>(row) + 0.5f;
          const float d = u * c6 + v * c7 + 1.0f;
          const float qx = (u * t[0] + v * t[1] + t[2]) / d - 1.0f;
          const float qy = (u * t[3] + v * t[4] + t[5]) / d - 1.0f;
          ASSERT_EQ(px[k], Clamped(std::fma(qx + 1.0f, w / 2, -0.5f))) << k;
          ASSERT_EQ(py[k], Clamped(std::fma(qy + 1.0f, h / 2, -0.5f))) << k;
        }
        for (float& v : r) v = rng.UniformFloat(-1.5f, 1.5f);
      }
    }
  }
  // Far outside: clamped to 2^22.
  const float huge[6] = {1e30f, 0, 0, 0, -1e30f, 0};
  float ix[3], iy[3];
  loops_->affine_coords_row(huge, 3, 3, 2, 0, 3, ix, iy);
  EXPECT_EQ(ix[2], 4194304.0f);
  EXPECT_EQ(iy[2], -4194304.0f);
}

// Coordinates on and around every rounding case: ties (half to even), negatives, the image's
// edges, the clamp's limits.
std::vector<float> InterestingCoordinates() {
  std::vector<float> v;
  for (float base = -3.0f; base <= 12.0f; base += 0.5f) {
    for (float delta : {0.0f, 1e-6f, -1e-6f, 0.25f}) v.push_back(base + delta);
  }
  for (float x : {-0.0f, 4194304.0f, -4194304.0f, 4194303.5f, -4194303.5f, 1e-30f, -1e-30f}) {
    v.push_back(x);
  }
  return v;
}

TEST_F(PixelLoopsTest, NearestOffsetsRoundHalfToEvenAndMarkOutside) {
  const std::vector<float> values = InterestingCoordinates();
  const int n = static_cast<int>(values.size());
  std::vector<float> ys(values.rbegin(), values.rend());
  std::vector<int32_t> offsets(n);
  for (int channels : {1, 3}) {
    loops_->nearest_offsets_row(values.data(), ys.data(), n, 9, 4, channels, offsets.data());
    for (int j = 0; j < n; ++j) {
      const int nx = static_cast<int>(std::nearbyint(values[j]));
      const int ny = static_cast<int>(std::nearbyint(ys[j]));
      const bool inside = nx >= 0 && nx < 9 && ny >= 0 && ny < 4;
      ASSERT_EQ(offsets[j], inside ? (ny * 9 + nx) * channels : -1) << values[j] << ", " << ys[j];
    }
  }
}

TEST_F(PixelLoopsTest, FloorSplitEqualsFloor) {
  const std::vector<float> values = InterestingCoordinates();
  const int n = static_cast<int>(values.size());
  std::vector<float> ys(values.rbegin(), values.rend()), fx(n), fy(n);
  std::vector<int32_t> x0(n), y0(n);
  loops_->floor_split_row(values.data(), ys.data(), n, x0.data(), y0.data(), fx.data(), fy.data());
  for (int j = 0; j < n; ++j) {
    ASSERT_EQ(x0[j], static_cast<int32_t>(std::floor(values[j]))) << values[j];
    ASSERT_EQ(y0[j], static_cast<int32_t>(std::floor(ys[j]))) << ys[j];
    ASSERT_EQ(fx[j], values[j] - std::floor(values[j])) << values[j];
    ASSERT_EQ(fy[j], ys[j] - std::floor(ys[j])) << ys[j];
  }
}

}  // namespace
}  // namespace pixel_loops
}  // namespace stoker
