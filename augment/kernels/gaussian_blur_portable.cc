// The blur kernel for the baseline target (see gaussian_blur_variants.h).

#include <cstring>

#include "augment/kernels/gaussian_blur_variants.h"

namespace stoker {
namespace blur_internal {
namespace {
#include "augment/kernels/gaussian_blur_body.inc"
}  // namespace

void GaussianBlurPortable(const ImageView& in, const float* weights, int ksize, float* scratch,
                          const ImageView& out) {
  BlurBody(in, weights, ksize, scratch, out);
}

}  // namespace blur_internal
}  // namespace stoker
