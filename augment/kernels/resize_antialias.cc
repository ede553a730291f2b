#include "augment/kernels/resize_antialias.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace stoker {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS

// One axis of PIL's precompute_coeffs (bilinear filter, support 1): output i reads `count[i]`
// inputs from `first[i]` with weights row i of `weights` (ksize per row; `fixed` in 22-bit
// fixed point, as normalize_coeffs_8bpc rounds them).
struct AxisWeights {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;
  std::vector<int32_t> fixed;
  std::vector<double> taps;  // scratch: one row's unnormalized taps (reused, no allocation)
};

void ComputeAxisWeights(int in_size, int out_size, AxisWeights* w) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;  // bilinear support 1.0 × filterscale
  w->ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  w->first.resize(out_size);
  w->count.resize(out_size);
  w->weights.assign(static_cast<size_t>(out_size) * w->ksize, 0.0f);
  w->fixed.assign(static_cast<size_t>(out_size) * w->ksize, 0);
  w->taps.resize(w->ksize);
  double* k = w->taps.data();
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    // Pillow rounds with a truncating cast, so -0.3 becomes 0 like 0.3.
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double total = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double t = std::abs((x + xmin - center + 0.5) * ss);
      k[x] = t < 1.0 ? 1.0 - t : 0.0;
      total += k[x];
    }
    for (int x = 0; x < xmax; ++x) {
      const double weight = total != 0.0 ? k[x] / total : k[x];
      w->weights[xx * w->ksize + x] = static_cast<float>(weight);
      w->fixed[xx * w->ksize + x] =
          static_cast<int32_t>(weight < 0 ? -0.5 + weight * (1 << kPrecisionBits)
                                          : 0.5 + weight * (1 << kPrecisionBits));
    }
    w->first[xx] = xmin;
    w->count[xx] = xmax;
  }
}

// Rounds and clips a 22-bit fixed-point accumulator like Pillow's clip8.
inline uint8_t Clip8(int32_t acc) {
  if (acc <= 0) return 0;
  if (acc >= (1 << kPrecisionBits << 8)) return 255;
  return static_cast<uint8_t>(acc >> kPrecisionBits);
}

// One output value from `count` inputs spaced `step` elements apart (Pillow's clip8).
inline uint8_t Taps(const uint8_t* src, size_t step, const AxisWeights& w, int i) {
  const int32_t* k = &w.fixed[static_cast<size_t>(i) * w.ksize];
  int32_t acc = 1 << (kPrecisionBits - 1);
  for (int t = 0; t < w.count[i]; ++t) acc += src[t * step] * k[t];
  return Clip8(acc);
}

inline float Taps(const float* src, size_t step, const AxisWeights& w, int i) {
  const float* k = &w.weights[static_cast<size_t>(i) * w.ksize];
  float acc = 0.0f;
  for (int t = 0; t < w.count[i]; ++t) acc += src[t * step] * k[t];
  return acc;
}

// The horizontal pass of one row: out_w pixels from `src` (the region's row).
template <typename T>
void HorizontalRow(const T* src, size_t channels, const AxisWeights& w, int out_w, T* line) {
  for (int x = 0; x < out_w; ++x) {
    const T* first = src + static_cast<size_t>(w.first[x]) * channels;
    for (size_t c = 0; c < channels; ++c) line[x * channels + c] = Taps(first + c, channels, w, x);
  }
}

// uint8 RGB: the three channels of a pixel in one pass over the taps (the same integer sums).
void HorizontalRowRgb8(const uint8_t* src, const AxisWeights& w, int out_w, uint8_t* line) {
  for (int x = 0; x < out_w; ++x) {
    const uint8_t* p = src + static_cast<size_t>(w.first[x]) * 3;
    const int32_t* k = &w.fixed[static_cast<size_t>(x) * w.ksize];
    int32_t r = 1 << (kPrecisionBits - 1), g = r, b = r;
    for (int t = 0; t < w.count[x]; ++t, p += 3) {
      r += p[0] * k[t];
      g += p[1] * k[t];
      b += p[2] * k[t];
    }
    line[x * 3] = Clip8(r);
    line[x * 3 + 1] = Clip8(g);
    line[x * 3 + 2] = Clip8(b);
  }
}

// The vertical pass of output row y: `n` values from the rows of `temp` the taps name.
template <typename T>
void VerticalRow(const T* first, size_t stride, size_t n, const AxisWeights& w, int y, T* dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = Taps(first + i, stride, w, y);
}

// uint8: whole rows accumulated tap by tap (vectorizes; the same integer sums as Taps).
template <>
void VerticalRow<uint8_t>(const uint8_t* first, size_t stride, size_t n, const AxisWeights& w,
                          int y, uint8_t* dst) {
  thread_local std::vector<int32_t> acc;
  acc.assign(n, 1 << (kPrecisionBits - 1));
  const int32_t* k = &w.fixed[static_cast<size_t>(y) * w.ksize];
  int32_t* a = acc.data();
  for (int t = 0; t < w.count[y]; ++t) {
    const uint8_t* row = first + static_cast<size_t>(t) * stride;
    const int32_t weight = k[t];
    for (size_t i = 0; i < n; ++i) a[i] += row[i] * weight;
  }
  for (size_t i = 0; i < n; ++i) dst[i] = Clip8(a[i]);
}

template <typename T>
void Resample(const ImageView& in, const PixelRect& region, const ImageView& out) {
  thread_local AxisWeights horizontal, vertical;
  thread_local std::vector<T> temp;
  const int out_h = static_cast<int>(out.shape.height), out_w = static_cast<int>(out.shape.width);
  const size_t channels = in.shape.channels;
  ComputeAxisWeights(static_cast<int>(region.width), out_w, &horizontal);
  ComputeAxisWeights(static_cast<int>(region.height), out_h, &vertical);
  // The input rows the vertical pass reads: [row_first, row_last) of the region.
  const int row_first = vertical.first[0];
  const int row_last = vertical.first[out_h - 1] + vertical.count[out_h - 1];
  const size_t temp_stride = static_cast<size_t>(out_w) * channels;
  temp.resize(static_cast<size_t>(row_last - row_first) * temp_stride);
  const size_t in_stride = size_t{in.shape.width} * channels;
  const T* src = in.pixels<const T>() + size_t{region.top} * in_stride + region.left * channels;
  for (int y = row_first; y < row_last; ++y) {
    T* line = temp.data() + static_cast<size_t>(y - row_first) * temp_stride;
    if constexpr (std::is_same_v<T, uint8_t>) {
      if (channels == 3) {
        HorizontalRowRgb8(src + y * in_stride, horizontal, out_w, line);
        continue;
      }
    }
    HorizontalRow(src + y * in_stride, channels, horizontal, out_w, line);
  }
  T* dst = out.pixels<T>();
  for (int y = 0; y < out_h; ++y) {
    const T* first = temp.data() + static_cast<size_t>(vertical.first[y] - row_first) * temp_stride;
    VerticalRow(first, temp_stride, temp_stride, vertical, y, dst + y * temp_stride);
  }
}

}  // namespace

void ResizeAntialiased(const ImageView& in, const PixelRect& region, const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) return Resample<uint8_t>(in, region, out);
  Resample<float>(in, region, out);
}

}  // namespace stoker
