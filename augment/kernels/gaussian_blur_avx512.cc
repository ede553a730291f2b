// The blur kernel compiled with -mavx512f -mavx512vl -mfma -mprefer-vector-width=512
// -ffp-contract=fast (see gaussian_blur_variants.h and augment/CMakeLists.txt): 16 floats per
// vector. Only called after CpuHasAvx512().

#include <cstring>

#include "augment/kernels/gaussian_blur_variants.h"

namespace stoker {
namespace blur_internal {
namespace {
#include "augment/kernels/gaussian_blur_body.inc"
}  // namespace

void GaussianBlurAvx512(const ImageView& in, const float* weights, int ksize, float* scratch,
                        const ImageView& out) {
  BlurBody(in, weights, ksize, scratch, out);
}

}  // namespace blur_internal
}  // namespace stoker
