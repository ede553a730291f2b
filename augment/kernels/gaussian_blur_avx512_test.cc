// The AVX-512 build of the blur kernel (and of the fused chain, against its blurs one by one)
// against the AVX2 build (equal bit for bit: the same fused
// multiply-adds per output in the same order, only wider vectors) and the baseline build (within
// 2e-6 of it on [0, 1) data: float rounding without FMA). Skipped, shown as skipped (exit 77),
// where the CPU lacks AVX-512 or AVX2.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "augment/kernels/gaussian_blur.h"
#include "augment/kernels/gaussian_blur_chain_testing.h"
#include "augment/kernels/gaussian_blur_variants.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"
#include "image/image.h"

namespace stoker {
namespace {

using BlurFn = void (*)(const ImageView&, const float*, int, float*, const ImageView&);

std::vector<float> Blur(BlurFn blur, const std::vector<float>& in, const ImageShape& shape,
                        int ksize, float sigma) {
  std::vector<float> w(static_cast<size_t>(ksize));
  GaussianKernel1D(ksize, sigma, w.data());
  std::vector<float> out(shape.elements(), -1.0f);
  std::vector<float> scratch(GaussianBlurScratchFloats(shape, ksize));
  blur(ImageView{const_cast<float*>(in.data()), shape}, w.data(), ksize, scratch.data(),
       ImageView{out.data(), shape});
  return out;
}

TEST(GaussianBlurAvx512Test, EqualsAvx2ExactlyAndBaselineWithinRounding) {
  if (!blur_internal::CpuHasAvx512()) GTEST_SKIP() << "this CPU lacks AVX-512 F/VL";
  ASSERT_TRUE(blur_internal::CpuHasAvx2Fma());
  // Widths that leave every remainder of a 16-float vector, radii unrolled and generic.
  for (int ksize : {3, 5, 11, 17, 31}) {
    for (uint32_t width : {7u, 16u, 33u, 224u}) {
      for (uint32_t channels : {1u, 3u}) {
        // Both sides above ksize / 2 (gaussian_blur.h's REQUIRES).
        const uint32_t radius = static_cast<uint32_t>(ksize / 2);
        const ImageShape shape{width / 2 + radius + 2, width + radius, channels,
                               PixelType::kFloat32};
        CounterRng rng(static_cast<uint64_t>(ksize) * 1000 + width * 10 + channels);
        std::vector<float> in(shape.elements());
        for (float& x : in) x = rng.UniformFloat();
        const float sigma = 0.3f + 0.1f * static_cast<float>(ksize);
        const std::vector<float> wide =
            Blur(&blur_internal::GaussianBlurAvx512, in, shape, ksize, sigma);
        const std::vector<float> avx2 =
            Blur(&blur_internal::GaussianBlurAvx2, in, shape, ksize, sigma);
        const std::vector<float> base =
            Blur(&blur_internal::GaussianBlurPortable, in, shape, ksize, sigma);
        const std::vector<float> dispatched = Blur(&GaussianBlur, in, shape, ksize, sigma);
        EXPECT_EQ(std::memcmp(wide.data(), avx2.data(), wide.size() * sizeof(float)), 0)
            << "ksize " << ksize << " width " << shape.width << " channels " << channels;
        EXPECT_EQ(std::memcmp(wide.data(), dispatched.data(), wide.size() * sizeof(float)), 0)
            << "the dispatcher must pick the AVX-512 build here";
        float max_diff = 0;
        for (size_t i = 0; i < wide.size(); ++i) {
          max_diff = std::max(max_diff, std::abs(wide[i] - base[i]));
        }
        EXPECT_LE(max_diff, 2e-6f) << "ksize " << ksize << " width " << shape.width;
      }
    }
  }
}

TEST(GaussianBlurAvx512Test, ChainEqualsBlursOneByOne) {
  if (!blur_internal::CpuHasAvx512()) GTEST_SKIP() << "this CPU lacks AVX-512 F/VL";
  blur_testing::ExpectChainEqualsOneByOne(&blur_internal::GaussianBlurChainAvx512,
                                          &blur_internal::GaussianBlurAvx512);
}

}  // namespace
}  // namespace stoker
