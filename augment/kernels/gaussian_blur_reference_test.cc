// Stoker's blur against torchvision's gaussian_blur on checked-in reference vectors
// (testdata/blur_reference.inc, written by scripts/gen_blur_reference.py).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "augment/kernels/gaussian_blur.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

struct BlurReferenceCase {
  uint32_t height;
  uint32_t width;
  uint32_t channels;
  int ksize;
  float sigma;
  const float* input;     // HWC
  const float* expected;  // HWC, torchvision's output
};

#include "augment/kernels/testdata/blur_reference.inc"

TEST(GaussianBlurReferenceTest, MatchesTorchvisionWithin1e4) {
  for (const BlurReferenceCase& c : kBlurReferenceCases) {
    const ImageShape shape{c.height, c.width, c.channels, PixelType::kFloat32};
    std::vector<float> weights(static_cast<size_t>(c.ksize));
    GaussianKernel1D(c.ksize, c.sigma, weights.data());
    std::vector<float> out(shape.elements());
    std::vector<float> scratch(GaussianBlurScratchFloats(shape, c.ksize));
    GaussianBlur(ImageView{const_cast<float*>(c.input), shape}, weights.data(), c.ksize,
                 scratch.data(), ImageView{out.data(), shape});
    float worst = 0;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - c.expected[i]));
    EXPECT_LT(worst, 1e-4f) << c.height << "x" << c.width << "x" << c.channels << " ksize "
                            << c.ksize << " sigma " << c.sigma;
  }
}

}  // namespace
}  // namespace stoker
