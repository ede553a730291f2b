#ifndef STOKER_AUGMENT_KERNELS_RESIZE_ANTIALIAS_VARIANTS_H_
#define STOKER_AUGMENT_KERNELS_RESIZE_ANTIALIAS_VARIANTS_H_

// The builds of the uint8 antialiased resize (resize_antialias.h) that ResizeAntialiased chooses
// from at run time, best first: one source (resize_antialias_body.inc) compiled three times, with
// AVX-512 BW + VNNI (resize_antialias_avx512.cc: the horizontal pass filters 8 rows per step, 4
// per vector, with fused multiply-accumulates), with AVX2 (resize_antialias_avx2.cc: 4 rows per
// step, 2 per vector) and for the baseline x86-64 target (resize_antialias_portable.cc: scalar
// horizontal pass). Every build does Pillow's integer arithmetic exactly — only the order of exact
// int32 sums differs — so all three give the same bytes as PIL (tested). Exposed so that tests can
// check each.
//
// The vector horizontal pass works on 3- and 4-channel images (1- and 2-channel ones take the
// scalar one in every build); the vertical pass is vectorized for every channel count.

#include <cstdint>
#include <vector>

#include "image/image.h"

namespace stoker {
namespace resize_internal {

// Pillow's PRECISION_BITS: weights are rounded to 22-bit fixed point.
constexpr int kPrecisionBits = 32 - 8 - 2;

// One axis of PIL's precompute_coeffs (bilinear filter, support 1): output i reads `count[i]`
// inputs from `first[i]` with weights row i of `weights` / `fixed` (ksize per row; `fixed` in
// 22-bit fixed point, as Pillow's normalize_coeffs_8bpc rounds them; zero past count[i]).
//
// For the vector horizontal passes each fixed weight k (0 <= k <= 2^22) is also split into
// k = hi * 2^15 + lo, with lo < 2^15 and hi <= 2^7, both fitting int16 so that a 16-bit
// multiply-add (pmaddwd) of pixel pairs gives exact int32 partial sums; `lo_pairs` / `hi_pairs`
// hold, per output and per pair of taps (2t, 2t+1), the two 16-bit halves packed in one uint32
// (tap 2t in the low half), `pairs` per output, zero past count[i].
struct AxisWeights {
  int ksize = 0;
  int pairs = 0;  // ceil(ksize / 4) * 2: whole groups of 4 taps
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;
  std::vector<int32_t> fixed;
  std::vector<uint32_t> lo_pairs;
  std::vector<uint32_t> hi_pairs;
  std::vector<double> taps;  // scratch: one row's unnormalized taps (reused, no allocation)
};

// Fills `w` for resampling `in_size` samples to `out_size` (reusing its storage).
void ComputeAxisWeights(int in_size, int out_size, AxisWeights* w);

// What one uint8 resample reads and writes. `horizontal` and `vertical` come from
// ComputeAxisWeights for the region's width and height; `temp` and `acc` are scratch that only
// grows.
struct Uint8Resample {
  const ImageView* in;
  const PixelRect* region;
  const AxisWeights* horizontal;
  const AxisWeights* vertical;
  std::vector<uint8_t>* temp;
  std::vector<int32_t>* acc;
  const ImageView* out;
};

void ResampleUint8Portable(const Uint8Resample& job);

// REQUIRES: CpuHasAvx2().
void ResampleUint8Avx2(const Uint8Resample& job);

// REQUIRES: CpuHasAvx512Vnni().
void ResampleUint8Avx512(const Uint8Resample& job);

// True when the build has the AVX2 variant and this CPU supports AVX2.
bool CpuHasAvx2();
// True when the build has the AVX-512 variant and this CPU supports AVX-512 F, BW, VL and VNNI.
bool CpuHasAvx512Vnni();

}  // namespace resize_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_RESIZE_ANTIALIAS_VARIANTS_H_
