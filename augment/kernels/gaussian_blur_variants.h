#ifndef STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_
#define STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_

// The builds of the blur kernel that GaussianBlur (gaussian_blur.h) chooses from at run time,
// best first: one source (gaussian_blur_body.inc) compiled three times, with AVX-512 (16 floats
// per vector; gaussian_blur_avx512.cc: -mavx512f -mavx512vl -mfma -mprefer-vector-width=512
// -ffp-contract=fast), with AVX2 and FMA (gaussian_blur_avx2.cc: -mavx2 -mfma
// -ffp-contract=fast) and for the baseline x86-64 target (SSE2). Same contract as GaussianBlur;
// exposed so that tests can check each. The AVX-512 and AVX2 builds do the same fused
// multiply-adds per output in the same order, so their results are equal bit for bit (tested);
// the baseline differs from them by float rounding (no FMA), not more.

#include "image/image.h"

namespace stoker {
namespace blur_internal {

void GaussianBlurPortable(const ImageView& in, const float* weights, int ksize, float* scratch,
                          const ImageView& out);

// REQUIRES: CpuHasAvx2Fma().
void GaussianBlurAvx2(const ImageView& in, const float* weights, int ksize, float* scratch,
                      const ImageView& out);

// REQUIRES: CpuHasAvx512().
void GaussianBlurAvx512(const ImageView& in, const float* weights, int ksize, float* scratch,
                        const ImageView& out);

// True when the build has the AVX2 variant and this CPU supports AVX2 and FMA.
bool CpuHasAvx2Fma();
// True when the build has the AVX-512 variant and this CPU supports AVX-512 F and VL (and FMA).
bool CpuHasAvx512();

}  // namespace blur_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_
