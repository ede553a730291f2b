#include "augment/kernels/gaussian_blur.h"

#include <cmath>
#include <cstring>

namespace stoker {
namespace {

// Largest radius (ksize / 2) with a fully unrolled specialization; larger kernels run the
// generic tap-by-tap loops.
constexpr int kMaxUnrolledRadius = 7;

// Index of row/column `i` (possibly outside [0, n)) under reflect-101. REQUIRES: -n < i < 2n - 1.
inline int Reflect101(int i, int n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * n - 2 - i;
  return i;
}

// Both passes compute, for each of `n` contiguous elements,
//   out[i] = c[0] * mid[i] + sum_{j=1..R} c[j] * (mid[i - j*step] + mid[i + j*step])
// where c[j] = weights[R + j]. The vertical pass uses a row pointer per tap instead of a step.

template <int R>
void VerticalPass(const float* const* rows, const float* c, size_t n, float* __restrict out) {
  float k[R + 1];
  const float* __restrict up[R + 1];
  const float* __restrict down[R + 1];
  for (int j = 0; j <= R; ++j) {
    k[j] = c[j];
    up[j] = rows[R - j];
    down[j] = rows[R + j];
  }
  for (size_t i = 0; i < n; ++i) {
    float acc = k[0] * up[0][i];
#pragma GCC unroll 16
    for (int j = 1; j <= R; ++j) acc += k[j] * (up[j][i] + down[j][i]);
    out[i] = acc;
  }
}

template <int R>
void HorizontalPass(const float* __restrict mid, size_t step, const float* c, size_t n,
                    float* __restrict out) {
  float k[R + 1];
  for (int j = 0; j <= R; ++j) k[j] = c[j];
  for (size_t i = 0; i < n; ++i) {
    float acc = k[0] * mid[i];
#pragma GCC unroll 16
    for (int j = 1; j <= R; ++j) acc += k[j] * (mid[i - j * step] + mid[i + j * step]);
    out[i] = acc;
  }
}

// Row y of the vertical pass for any radius, one tap pair at a time.
void VerticalPassGeneric(const float* src, int y, int height, const float* c, int radius, size_t n,
                         float* __restrict out) {
  const float* __restrict center = src + static_cast<size_t>(y) * n;
  const float k0 = c[0];
  for (size_t i = 0; i < n; ++i) out[i] = k0 * center[i];
  for (int j = 1; j <= radius; ++j) {
    const float* __restrict up = src + static_cast<size_t>(Reflect101(y - j, height)) * n;
    const float* __restrict down = src + static_cast<size_t>(Reflect101(y + j, height)) * n;
    const float k = c[j];
    for (size_t i = 0; i < n; ++i) out[i] += k * (up[i] + down[i]);
  }
}

void HorizontalPassGeneric(const float* __restrict mid, size_t step, const float* c, int radius,
                           size_t n, float* __restrict out) {
  const float k0 = c[0];
  for (size_t i = 0; i < n; ++i) out[i] = k0 * mid[i];
  for (int j = 1; j <= radius; ++j) {
    const float* __restrict left = mid - j * step;
    const float* __restrict right = mid + j * step;
    const float k = c[j];
    for (size_t i = 0; i < n; ++i) out[i] += k * (left[i] + right[i]);
  }
}

using VerticalFn = void (*)(const float* const*, const float*, size_t, float*);
using HorizontalFn = void (*)(const float*, size_t, const float*, size_t, float*);

constexpr VerticalFn kVertical[kMaxUnrolledRadius + 1] = {
    nullptr,         VerticalPass<1>, VerticalPass<2>, VerticalPass<3>,
    VerticalPass<4>, VerticalPass<5>, VerticalPass<6>, VerticalPass<7>};
constexpr HorizontalFn kHorizontal[kMaxUnrolledRadius + 1] = {
    nullptr,           HorizontalPass<1>, HorizontalPass<2>, HorizontalPass<3>,
    HorizontalPass<4>, HorizontalPass<5>, HorizontalPass<6>, HorizontalPass<7>};

}  // namespace

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
  return (size_t{shape.width} + 2 * radius) * shape.channels;
}

void GaussianBlur(const ImageView& in, const float* weights, int ksize, float* scratch,
                  const ImageView& out) {
  const int height = static_cast<int>(in.shape.height);
  const int radius = ksize / 2;
  const size_t channels = in.shape.channels;
  const size_t row_elems = size_t{in.shape.width} * channels;
  const float* src = in.pixels<const float>();
  float* dst = out.pixels<float>();
  if (radius == 0) {
    // A 1-tap kernel normalizes to exactly 1.
    std::memcpy(dst, src, in.shape.bytes());
    return;
  }
  const float* c = weights + radius;  // c[j] = weight at offset j from the center.
  const VerticalFn vertical = radius <= kMaxUnrolledRadius ? kVertical[radius] : nullptr;
  const HorizontalFn horizontal = radius <= kMaxUnrolledRadius ? kHorizontal[radius] : nullptr;

  // The padded row: [radius pixels of left border | row_elems | radius pixels of right border].
  const size_t pad = static_cast<size_t>(radius) * channels;
  float* mid = scratch + pad;
  const float* rows[2 * kMaxUnrolledRadius + 1];
  const float* const* row_ptrs = rows;
  for (int y = 0; y < height; ++y) {
    float* out_row = dst + static_cast<size_t>(y) * row_elems;
    if (vertical != nullptr) {
      for (int t = -radius; t <= radius; ++t) {
        rows[t + radius] = src + static_cast<size_t>(Reflect101(y + t, height)) * row_elems;
      }
      vertical(row_ptrs, c, row_elems, mid);
    } else {
      VerticalPassGeneric(src, y, height, c, radius, row_elems, mid);
    }
    // Reflect-101 borders of the row: pixel -x mirrors pixel x, pixel W-1+x mirrors W-1-x.
    const size_t width = in.shape.width;
    for (int x = 1; x <= radius; ++x) {
      std::memcpy(mid - x * channels, mid + x * channels, channels * sizeof(float));
      std::memcpy(mid + (width - 1 + x) * channels, mid + (width - 1 - x) * channels,
                  channels * sizeof(float));
    }
    if (horizontal != nullptr) {
      horizontal(mid, channels, c, row_elems, out_row);
    } else {
      HorizontalPassGeneric(mid, channels, c, radius, row_elems, out_row);
    }
  }
}

}  // namespace stoker
