// The blur kernel compiled with -mavx512f -mavx512vl -mfma -mprefer-vector-width=512
// -ffp-contract=fast (see gaussian_blur_variants.h and augment/CMakeLists.txt): 16 floats per
// vector. Only called after CpuHasAvx512().

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

void GaussianBlurAvx512(const ImageView& in, const float* weights, int ksize, float* scratch,
                        const ImageView& out) {
  BlurBody(in, weights, ksize, scratch, out);
}

void GaussianBlurChainAvx512(const ImageView& in, const float* const* weights, const int* ksizes,
                             int count, float* scratch, const ImageView& out) {
  BlurChainBody(in, weights, ksizes, count, scratch, out);
}

}  // namespace blur_internal
}  // namespace stoker
