// The blur kernel compiled with -mavx2 -mfma -ffp-contract=fast (see gaussian_blur_variants.h
// and augment/CMakeLists.txt). Only called after CpuHasAvx2Fma().

#include <cstring>

#include "augment/kernels/gaussian_blur_variants.h"

namespace stoker {
namespace blur_internal {
namespace {
#include "augment/kernels/gaussian_blur_body.inc"
}  // namespace

void GaussianBlurAvx2(const ImageView& in, const float* weights, int ksize, float* scratch,
                      const ImageView& out) {
  BlurBody(in, weights, ksize, scratch, out);
}

}  // namespace blur_internal
}  // namespace stoker
