#include "augment/kernels/warp.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace stoker {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Radians(double degrees) { return degrees * kPi / 180.0; }

// Sum of weight × value over the in-bounds neighbours of one channel; `inside` gets the sum of
// the in-bounds weights (torchvision's mask channel).
template <typename T>
float SampleBilinear(const T* src, int w, int h, size_t channels, size_t c, float ix, float iy,
                     float* inside) {
  const float x0 = std::floor(ix), y0 = std::floor(iy);
  const float fx = ix - x0, fy = iy - y0;
  const int xs[2] = {static_cast<int>(x0), static_cast<int>(x0) + 1};
  const int ys[2] = {static_cast<int>(y0), static_cast<int>(y0) + 1};
  const float wx[2] = {1.0f - fx, fx}, wy[2] = {1.0f - fy, fy};
  float sum = 0.0f, weight = 0.0f;
  for (int b = 0; b < 2; ++b) {
    for (int a = 0; a < 2; ++a) {
      if (xs[a] < 0 || xs[a] >= w || ys[b] < 0 || ys[b] >= h) continue;
      const float k = wx[a] * wy[b];
      sum += k * static_cast<float>(src[(static_cast<size_t>(ys[b]) * w + xs[a]) * channels + c]);
      weight += k;
    }
  }
  *inside = weight;
  return sum;
}

template <typename T>
T Store(float v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::nearbyint(v));  // torch.round: half to even
  } else {
    return v;
  }
}

template <typename T>
void Warp(const ImageView& in, const float (&r)[6], bool bilinear, const float* fill,
          const ImageView& out) {
  const int w = static_cast<int>(in.shape.width), h = static_cast<int>(in.shape.height);
  const size_t channels = in.shape.channels;
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  for (int i = 0; i < h; ++i) {
    const float y = -h * 0.5f + 0.5f + static_cast<float>(i);
    for (int j = 0; j < w; ++j) {
      const float x = -w * 0.5f + 0.5f + static_cast<float>(j);
      // The grid (base_grid.bmm(rescaled_theta)), then grid_sample's unnormalization.
      const float gx = x * r[0] + y * r[1] + r[2];
      const float gy = x * r[3] + y * r[4] + r[5];
      const float ix = ((gx + 1.0f) * static_cast<float>(w) - 1.0f) / 2.0f;
      const float iy = ((gy + 1.0f) * static_cast<float>(h) - 1.0f) / 2.0f;
      T* pixel = dst + (static_cast<size_t>(i) * w + j) * channels;
      if (!bilinear) {
        const int nx = static_cast<int>(std::nearbyint(ix));
        const int ny = static_cast<int>(std::nearbyint(iy));
        const bool in_bounds = nx >= 0 && nx < w && ny >= 0 && ny < h;
        for (size_t c = 0; c < channels; ++c) {
          const float v =
              in_bounds ? static_cast<float>(src[(static_cast<size_t>(ny) * w + nx) * channels + c])
                        : (fill != nullptr ? fill[c] : 0.0f);
          pixel[c] = Store<T>(v);
        }
        continue;
      }
      for (size_t c = 0; c < channels; ++c) {
        float inside = 0.0f;
        float v = SampleBilinear(src, w, h, channels, c, ix, iy, &inside);
        if (fill != nullptr) v = v * inside + (1.0f - inside) * fill[c];
        pixel[c] = Store<T>(v);
      }
    }
  }
}

}  // namespace

std::array<double, 6> InverseAffineMatrix(double angle, double translate_x, double translate_y,
                                          double scale, double shear_x, double shear_y) {
  const double rot = Radians(angle), sx = Radians(shear_x), sy = Radians(shear_y);
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0};
  m[2] += m[0] * (-translate_x) + m[1] * (-translate_y);
  m[5] += m[3] * (-translate_x) + m[4] * (-translate_y);
  return m;
}

void AffineWarp(const ImageView& in, const std::array<double, 6>& matrix, bool bilinear,
                const float* fill, const ImageView& out) {
  // theta in float32, divided by (0.5 w, 0.5 h) as torchvision's rescaled_theta.
  const float half_w = 0.5f * static_cast<float>(in.shape.width);
  const float half_h = 0.5f * static_cast<float>(in.shape.height);
  float r[6];
  for (int k = 0; k < 3; ++k) {
    r[k] = static_cast<float>(matrix[k]) / half_w;
    r[3 + k] = static_cast<float>(matrix[3 + k]) / half_h;
  }
  if (in.shape.type == PixelType::kUint8) return Warp<uint8_t>(in, r, bilinear, fill, out);
  Warp<float>(in, r, bilinear, fill, out);
}

}  // namespace stoker
