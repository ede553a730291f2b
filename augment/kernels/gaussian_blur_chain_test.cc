// The fused blur chain (GaussianBlurChain) equals ToFloat and GaussianBlur one blur at a time,
// bit for bit, for the baseline build, the AVX2 build and the build the dispatcher picks
// (the AVX-512 build's own check is in gaussian_blur_avx512_test, which skips without AVX-512).
// Its own binary: the AVX2 case skips (exit 77, shown as skipped) where the CPU lacks AVX2.

#include "augment/kernels/gaussian_blur.h"
#include "augment/kernels/gaussian_blur_chain_testing.h"
#include "augment/kernels/gaussian_blur_variants.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(GaussianBlurChainTest, PortableBuildEqualsBlursOneByOne) {
  blur_testing::ExpectChainEqualsOneByOne(&blur_internal::GaussianBlurChainPortable,
                                          &blur_internal::GaussianBlurPortable);
}

TEST(GaussianBlurChainTest, DispatchedChainEqualsDispatchedBlursOneByOne) {
  blur_testing::ExpectChainEqualsOneByOne(&GaussianBlurChain, &GaussianBlur);
}

TEST(GaussianBlurChainTest, Avx2BuildEqualsBlursOneByOne) {
  if (!blur_internal::CpuHasAvx2Fma()) GTEST_SKIP() << "this CPU lacks AVX2 and FMA";
  blur_testing::ExpectChainEqualsOneByOne(&blur_internal::GaussianBlurChainAvx2,
                                          &blur_internal::GaussianBlurAvx2);
}

}  // namespace
}  // namespace stoker
