#include "augment/kernels/gaussian_blur.h"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "augment/kernels/gaussian_blur_variants.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "image/image.h"

namespace stoker {
namespace {

int Reflect(int i, int n) {
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
  return i;
}

// The straightforward definition: a full ksize × ksize convolution with reflect-101 borders,
// accumulated in double.
std::vector<float> ReferenceBlur(const std::vector<float>& in, const ImageShape& shape,
                                 const std::vector<float>& w) {
  const int h = static_cast<int>(shape.height);
  const int wd = static_cast<int>(shape.width);
  const int c = static_cast<int>(shape.channels);
  const int r = static_cast<int>(w.size()) / 2;
  std::vector<float> out(in.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < wd; ++x) {
      for (int ch = 0; ch < c; ++ch) {
        double acc = 0;
        for (int dy = -r; dy <= r; ++dy) {
          for (int dx = -r; dx <= r; ++dx) {
            const int sy = Reflect(y + dy, h);
            const int sx = Reflect(x + dx, wd);
            acc += double{w[dy + r]} * w[dx + r] * in[(size_t(sy) * wd + sx) * c + ch];
          }
        }
        out[(size_t(y) * wd + x) * c + ch] = static_cast<float>(acc);
      }
    }
  }
  return out;
}

std::vector<float> RandomPixels(size_t n, uint64_t key) {
  CounterRng rng(key);
  std::vector<float> v(n);
  for (float& x : v) x = rng.UniformFloat();
  return v;
}

float MaxAbsDiff(const std::vector<float>& a, const float* b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(GaussianKernel1DTest, MatchesTorchvisionFormula) {
  float w[5];
  GaussianKernel1D(5, 1.0f, w);
  // torchvision: exp(-0.5 * x^2) for x = -2..2, normalized.
  const double e1 = std::exp(-0.5), e2 = std::exp(-2.0);
  const double sum = 1 + 2 * e1 + 2 * e2;
  EXPECT_NEAR(w[2], 1 / sum, 1e-7);
  EXPECT_NEAR(w[1], e1 / sum, 1e-7);
  EXPECT_NEAR(w[0], e2 / sum, 1e-7);
  EXPECT_EQ(w[0], w[4]);
  EXPECT_EQ(w[1], w[3]);
  float one[1];
  GaussianKernel1D(1, 0.7f, one);
  EXPECT_EQ(one[0], 1.0f);
}

TEST(GaussianBlurTest, ConstantImageStaysConstant) {
  const ImageShape shape{7, 9, 3, PixelType::kFloat32};
  std::vector<float> in(shape.elements(), 0.25f), out(shape.elements()), scratch(256);
  float w[5];
  GaussianKernel1D(5, 1.3f, w);
  ASSERT_LE(GaussianBlurScratchFloats(shape, 5), scratch.size());
  GaussianBlur(ImageView{in.data(), shape}, w, 5, scratch.data(), ImageView{out.data(), shape});
  for (float v : out) EXPECT_NEAR(v, 0.25f, 1e-6);
}

TEST(GaussianBlurTest, OneTapKernelCopies) {
  const ImageShape shape{2, 3, 1, PixelType::kFloat32};
  std::vector<float> in = {1, 2, 3, 4, 5, 6}, out(6), scratch(16);
  float w[1];
  GaussianKernel1D(1, 1.0f, w);
  GaussianBlur(ImageView{in.data(), shape}, w, 1, scratch.data(), ImageView{out.data(), shape});
  EXPECT_EQ(out, in);
}

TEST(GaussianBlurTest, ReflectPaddingOnKnownRow) {
  // Two equal rows [1 2 3 4] with the kernel [1/4 1/2 1/4]: the vertical pass leaves them as
  // they are, so the output shows the horizontal borders alone.
  const ImageShape shape{2, 4, 1, PixelType::kFloat32};
  std::vector<float> in = {1, 2, 3, 4, 1, 2, 3, 4}, out(8), scratch(16);
  const float w[3] = {0.25f, 0.5f, 0.25f};
  GaussianBlur(ImageView{in.data(), shape}, w, 3, scratch.data(), ImageView{out.data(), shape});
  // x=0: 0.25*in[1] + 0.5*in[0] + 0.25*in[1] (reflect-101: index -1 → 1).
  EXPECT_FLOAT_EQ(out[0], 0.25f * 2 + 0.5f * 1 + 0.25f * 2);
  EXPECT_FLOAT_EQ(out[1], 0.25f * 1 + 0.5f * 2 + 0.25f * 3);
  EXPECT_FLOAT_EQ(out[3], 0.25f * 3 + 0.5f * 4 + 0.25f * 3);
  EXPECT_FLOAT_EQ(out[7], out[3]);
}

struct BlurCase {
  int ksize;
  float sigma;
  uint32_t height;
  uint32_t width;
  uint32_t channels;
};

class GaussianBlurVsReferenceTest : public ::testing::TestWithParam<BlurCase> {};

TEST_P(GaussianBlurVsReferenceTest, MatchesFull2DConvolution) {
  const BlurCase& p = GetParam();
  const ImageShape shape{p.height, p.width, p.channels, PixelType::kFloat32};
  const std::vector<float> in = RandomPixels(shape.elements(), p.ksize * 1000 + p.height);
  std::vector<float> w(static_cast<size_t>(p.ksize));
  GaussianKernel1D(p.ksize, p.sigma, w.data());
  const std::vector<float> expected = ReferenceBlur(in, shape, w);
  // The dispatcher, and each build of the kernel this CPU can run.
  using BlurFn = void (*)(const ImageView&, const float*, int, float*, const ImageView&);
  std::vector<std::pair<const char*, BlurFn>> variants = {
      {"dispatch", &GaussianBlur}, {"portable", &blur_internal::GaussianBlurPortable}};
  if (blur_internal::CpuHasAvx2Fma()) {
    variants.push_back({"avx2", &blur_internal::GaussianBlurAvx2});
  }
  if (blur_internal::CpuHasAvx512()) {
    variants.push_back({"avx512", &blur_internal::GaussianBlurAvx512});
  }
  for (const auto& [name, blur] : variants) {
    std::vector<float> out(shape.elements(), -1.0f);
    std::vector<float> scratch(GaussianBlurScratchFloats(shape, p.ksize));
    blur(ImageView{const_cast<float*>(in.data()), shape}, w.data(), p.ksize, scratch.data(),
         ImageView{out.data(), shape});
    EXPECT_LT(MaxAbsDiff(expected, out.data()), 1e-5f) << name;
  }
}

std::vector<BlurCase> BlurCases() {
  std::vector<BlurCase> cases;
  for (int ksize : {3, 5, 11, 17}) {
    for (float sigma : {0.1f, 0.8f, 2.0f, 5.0f}) {
      const uint32_t small = static_cast<uint32_t>(ksize / 2 + 1);  // Just above ksize/2.
      for (uint32_t channels : {1u, 3u}) {
        cases.push_back({ksize, sigma, small, small, channels});
        cases.push_back({ksize, sigma, small + 1, 2 * small + 3, channels});
        cases.push_back({ksize, sigma, 23, 31, channels});
      }
    }
  }
  cases.push_back({11, 1.5f, 6, 40, 4});  // Another channel count.
  cases.push_back({11, 1.5f, 64, 64, 3});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Sizes, GaussianBlurVsReferenceTest, ::testing::ValuesIn(BlurCases()));

}  // namespace
}  // namespace stoker
