#include "augment/kernels/resize_antialias.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "augment/kernels/resize_antialias_variants.h"

namespace stoker {
namespace resize_internal {

void ComputeAxisWeights(int in_size, int out_size, AxisWeights* w) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;  // bilinear support 1.0 × filterscale
  w->ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  w->pairs = 2 * ((w->ksize + 3) / 4);
  w->first.resize(out_size);
  w->count.resize(out_size);
  w->weights.assign(static_cast<size_t>(out_size) * w->ksize, 0.0f);
  w->fixed.assign(static_cast<size_t>(out_size) * w->ksize, 0);
  w->lo_pairs.assign(static_cast<size_t>(out_size) * w->pairs, 0);
  w->hi_pairs.assign(static_cast<size_t>(out_size) * w->pairs, 0);
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
      const size_t at = static_cast<size_t>(xx) * w->ksize + x;
      w->weights[at] = static_cast<float>(weight);
      // The triangle filter's weights are >= 0, so Pillow's rounding is 0.5 + weight * 2^22 and
      // the fixed weight lies in [0, 2^22].
      const auto fixed = static_cast<uint32_t>(0.5 + weight * (1 << kPrecisionBits));
      w->fixed[at] = static_cast<int32_t>(fixed);
      const size_t pair = static_cast<size_t>(xx) * w->pairs + x / 2;
      const int half = 16 * (x % 2);
      w->lo_pairs[pair] |= (fixed & 0x7fff) << half;
      w->hi_pairs[pair] |= (fixed >> 15) << half;
    }
    w->first[xx] = xmin;
    w->count[xx] = xmax;
  }
}

bool CpuHasAvx2() {
#if defined(__x86_64__) && defined(STOKER_HAVE_AVX2_RESIZE)
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported;
#else
  return false;
#endif
}

bool CpuHasAvx512Vnni() {
#if defined(__x86_64__) && defined(STOKER_HAVE_AVX2_RESIZE)
  static const bool supported =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  return supported;
#else
  return false;
#endif
}

}  // namespace resize_internal

namespace {

using resize_internal::AxisWeights;

inline float Taps(const float* src, size_t step, const AxisWeights& w, int i) {
  const float* k = &w.weights[static_cast<size_t>(i) * w.ksize];
  float acc = 0.0f;
  for (int t = 0; t < w.count[i]; ++t) acc += src[t * step] * k[t];
  return acc;
}

// float32: Pillow's passes with the unrounded weights (torchvision's antialiased tensor path).
void ResampleFloat(const ImageView& in, const PixelRect& region, const AxisWeights& horizontal,
                   const AxisWeights& vertical, std::vector<float>* temp, const ImageView& out) {
  const int out_h = static_cast<int>(out.shape.height), out_w = static_cast<int>(out.shape.width);
  const size_t channels = in.shape.channels;
  // The input rows the vertical pass reads: [row_first, row_last) of the region.
  const int row_first = vertical.first[0];
  const int row_last = vertical.first[out_h - 1] + vertical.count[out_h - 1];
  const size_t temp_stride = static_cast<size_t>(out_w) * channels;
  temp->resize(static_cast<size_t>(row_last - row_first) * temp_stride);
  const size_t in_stride = size_t{in.shape.width} * channels;
  const float* src =
      in.pixels<const float>() + size_t{region.top} * in_stride + size_t{region.left} * channels;
  for (int y = row_first; y < row_last; ++y) {
    float* line = temp->data() + static_cast<size_t>(y - row_first) * temp_stride;
    for (int x = 0; x < out_w; ++x) {
      const float* first =
          src + y * in_stride + static_cast<size_t>(horizontal.first[x]) * channels;
      for (size_t c = 0; c < channels; ++c) {
        line[x * channels + c] = Taps(first + c, channels, horizontal, x);
      }
    }
  }
  float* dst = out.pixels<float>();
  for (int y = 0; y < out_h; ++y) {
    const float* first =
        temp->data() + static_cast<size_t>(vertical.first[y] - row_first) * temp_stride;
    for (size_t i = 0; i < temp_stride; ++i) {
      dst[y * temp_stride + i] = Taps(first + i, temp_stride, vertical, y);
    }
  }
}

}  // namespace

void ResizeAntialiased(const ImageView& in, const PixelRect& region, const ImageView& out) {
  thread_local AxisWeights horizontal, vertical;
  ComputeAxisWeights(static_cast<int>(region.width), static_cast<int>(out.shape.width),
                     &horizontal);
  ComputeAxisWeights(static_cast<int>(region.height), static_cast<int>(out.shape.height),
                     &vertical);
  if (in.shape.type == PixelType::kFloat32) {
    thread_local std::vector<float> temp;
    return ResampleFloat(in, region, horizontal, vertical, &temp, out);
  }
  thread_local std::vector<uint8_t> temp;
  thread_local std::vector<int32_t> acc;
  const resize_internal::Uint8Resample job{&in, &region, &horizontal, &vertical, &temp, &acc, &out};
#if defined(STOKER_HAVE_AVX2_RESIZE)
  if (resize_internal::CpuHasAvx512Vnni()) return resize_internal::ResampleUint8Avx512(job);
  if (resize_internal::CpuHasAvx2()) return resize_internal::ResampleUint8Avx2(job);
#endif
  resize_internal::ResampleUint8Portable(job);
}

}  // namespace stoker
