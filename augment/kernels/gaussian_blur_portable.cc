// The blur kernel for the baseline target (see gaussian_blur_variants.h).

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "augment/kernels/gaussian_blur.h"
#include "augment/kernels/gaussian_blur_variants.h"
#include "augment/kernels/to_float.h"

namespace stoker {
namespace blur_internal {
namespace {
#include "augment/kernels/gaussian_blur_body.inc"
#include "augment/kernels/gaussian_blur_chain.inc"
}  // namespace

void GaussianBlurPortable(const ImageView& in, const float* weights, int ksize, float* scratch,
                          const ImageView& out) {
  BlurBody(in, weights, ksize, scratch, out);
}

void GaussianBlurChainPortable(const ImageView& in, const float* const* weights, const int* ksizes,
                               int count, float* scratch, const ImageView& out) {
  BlurChainBody(in, weights, ksizes, count, scratch, out);
}

}  // namespace blur_internal
}  // namespace stoker
