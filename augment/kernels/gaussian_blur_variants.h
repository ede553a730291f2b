#ifndef STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_
#define STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_

// The builds of the blur kernel that GaussianBlur (gaussian_blur.h) chooses from at run time:
// one source (gaussian_blur_body.inc) compiled twice, for the baseline x86-64 target (SSE2) and
// with AVX2 and FMA (gaussian_blur_avx2.cc is compiled with -mavx2 -mfma -ffp-contract=fast).
// Same contract as GaussianBlur; exposed so that tests can check both. Results of the two
// differ by float rounding (FMA), not more.

#include "image/image.h"

namespace stoker {
namespace blur_internal {

void GaussianBlurPortable(const ImageView& in, const float* weights, int ksize, float* scratch,
                          const ImageView& out);

// REQUIRES: CpuHasAvx2Fma().
void GaussianBlurAvx2(const ImageView& in, const float* weights, int ksize, float* scratch,
                      const ImageView& out);

// True when the build has the AVX2 variant and this CPU supports AVX2 and FMA.
bool CpuHasAvx2Fma();

}  // namespace blur_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_
