#ifndef STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_
#define STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_

// The builds of the blur kernel that GaussianBlur and GaussianBlurChain (gaussian_blur.h) choose
// from at run time, best first: one source (gaussian_blur_body.inc and gaussian_blur_chain.inc)
// compiled three times, with AVX-512 (16 floats
// per vector; gaussian_blur_avx512.cc: -mavx512f -mavx512vl -mfma -mprefer-vector-width=512
// -ffp-contract=fast), with AVX2 and FMA (gaussian_blur_avx2.cc: -mavx2 -mfma
// -ffp-contract=fast) and for the baseline x86-64 target (SSE2). Same contract as GaussianBlur;
// exposed so that tests can check each. The AVX-512 and AVX2 builds do the same fused
// multiply-adds per output in the same order, so their results are equal bit for bit (tested);
// the baseline differs from them by float rounding (no FMA), not more.

#include <cstddef>

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

// The builds of GaussianBlurChain (same contract; same REQUIRES on the CPU as above).
void GaussianBlurChainPortable(const ImageView& in, const float* const* weights, const int* ksizes,
                               int count, float* scratch, const ImageView& out);
void GaussianBlurChainAvx2(const ImageView& in, const float* const* weights, const int* ksizes,
                           int count, float* scratch, const ImageView& out);
void GaussianBlurChainAvx512(const ImageView& in, const float* const* weights, const int* ksizes,
                             int count, float* scratch, const ImageView& out);

// The fused chain's scratch layout (gaussian_blur_chain.inc), in floats from the first 64-byte
// boundary of the scratch: four padded mid rows (pad floats each side), then each blur's ring of
// input rows. Every row starts on a 64-byte boundary: misaligned rings made the chain 15-20 %
// slower (cache-line-split loads in the vertical pass).
inline size_t ChainRound16(size_t floats) { return (floats + 15) / 16 * 16; }
// Floats from one mid row's start to the next one's (`pad` before the row, `pad` after it).
inline size_t ChainMidStride(size_t row_elems, size_t pad) {
  return ChainRound16(pad) + ChainRound16(row_elems + pad);
}
inline size_t ChainRingRowStride(size_t row_elems) { return ChainRound16(row_elems); }
constexpr size_t kChainAlignFloats = 16;  // Slack for moving the start to a 64-byte boundary.

// True when the build has the AVX2 variant and this CPU supports AVX2 and FMA.
bool CpuHasAvx2Fma();
// True when the build has the AVX-512 variant and this CPU supports AVX-512 F and VL (and FMA).
bool CpuHasAvx512();

}  // namespace blur_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_VARIANTS_H_
