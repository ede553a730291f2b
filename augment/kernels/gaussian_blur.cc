#include "augment/kernels/gaussian_blur.h"

#include <algorithm>
#include <cmath>

#include "augment/kernels/gaussian_blur_variants.h"

namespace stoker {
namespace blur_internal {

bool CpuHasAvx2Fma() {
#if defined(__x86_64__) && defined(STOKER_HAVE_AVX2_BLUR)
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

bool CpuHasAvx512() {
#if defined(__x86_64__) && defined(STOKER_HAVE_AVX2_BLUR)
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

}  // namespace blur_internal

void GaussianKernel1D(int ksize, float sigma, float* weights) {
  // Mirrors torchvision's _get_gaussian_kernel1d, float32 throughout.
  const float half = static_cast<float>(ksize - 1) * 0.5f;
  const float step = ksize > 1 ? (2.0f * half) / static_cast<float>(ksize - 1) : 0.0f;
  float sum = 0.0f;
  for (int i = 0; i < ksize; ++i) {
    const float x = (-half + step * static_cast<float>(i)) / sigma;
    weights[i] = std::exp(-0.5f * x * x);
    sum += weights[i];
  }
  for (int i = 0; i < ksize; ++i) weights[i] /= sum;
  // Make the symmetry exact, which the separable passes rely on.
  for (int i = 0; i < ksize / 2; ++i) weights[ksize - 1 - i] = weights[i];
}

size_t GaussianBlurScratchFloats(const ImageShape& shape, int ksize) {
  const size_t radius = static_cast<size_t>(ksize / 2);
  return 4 * (size_t{shape.width} + 2 * radius) * shape.channels;  // Four padded rows.
}

void GaussianBlur(const ImageView& in, const float* weights, int ksize, float* scratch,
                  const ImageView& out) {
#if defined(STOKER_HAVE_AVX2_BLUR)
  if (blur_internal::CpuHasAvx512()) {
    blur_internal::GaussianBlurAvx512(in, weights, ksize, scratch, out);
    return;
  }
  if (blur_internal::CpuHasAvx2Fma()) {
    blur_internal::GaussianBlurAvx2(in, weights, ksize, scratch, out);
    return;
  }
#endif
  blur_internal::GaussianBlurPortable(in, weights, ksize, scratch, out);
}

size_t GaussianBlurChainScratchFloats(const ImageShape& in_shape, const int* ksizes, int count) {
  const size_t row_elems = size_t{in_shape.width} * in_shape.channels;
  int max_radius = 0;
  size_t ring_rows = 0;
  for (int k = 0; k < count; ++k) {
    const int radius = ksizes[k] / 2;
    max_radius = std::max(max_radius, radius);
    // Blur k's input ring (gaussian_blur_chain.inc); the first blur of float32 input reads it.
    if (k > 0 || in_shape.type != PixelType::kFloat32) ring_rows += 2 * radius + 7;
  }
  const size_t pad = static_cast<size_t>(max_radius) * in_shape.channels;
  return blur_internal::kChainAlignFloats + 4 * blur_internal::ChainMidStride(row_elems, pad) +
         ring_rows * blur_internal::ChainRingRowStride(row_elems);
}

void GaussianBlurChain(const ImageView& in, const float* const* weights, const int* ksizes,
                       int count, float* scratch, const ImageView& out) {
#if defined(STOKER_HAVE_AVX2_BLUR)
  if (blur_internal::CpuHasAvx512()) {
    blur_internal::GaussianBlurChainAvx512(in, weights, ksizes, count, scratch, out);
    return;
  }
  if (blur_internal::CpuHasAvx2Fma()) {
    blur_internal::GaussianBlurChainAvx2(in, weights, ksizes, count, scratch, out);
    return;
  }
#endif
  blur_internal::GaussianBlurChainPortable(in, weights, ksizes, count, scratch, out);
}

}  // namespace stoker
