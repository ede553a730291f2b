#include "augment/kernels/warp.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

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

// Samples `in` at grid_sample's input position of each output pixel: `grid(x, y, &gx, &gy)`
// gives the normalized grid point ([-1, 1] across the image) of the output pixel centred at
// (x, y) (pixel units from the top-left corner, centres at +0.5).
template <typename T, typename Grid>
void Warp(const ImageView& in, Grid grid, bool bilinear, const float* fill, const ImageView& out) {
  const int w = static_cast<int>(in.shape.width), h = static_cast<int>(in.shape.height);
  const size_t channels = in.shape.channels;
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  for (int i = 0; i < h; ++i) {
    for (int j = 0; j < w; ++j) {
      float gx, gy;
      grid(static_cast<float>(j) + 0.5f, static_cast<float>(i) + 0.5f, &gx, &gy);
      // grid_sample's unnormalization (align_corners=False).
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

template <typename Grid>
void WarpAny(const ImageView& in, Grid grid, bool bilinear, const float* fill,
             const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) return Warp<uint8_t>(in, grid, bilinear, fill, out);
  Warp<float>(in, grid, bilinear, fill, out);
}

// Solves the 8 x 8 system a x = b by Gaussian elimination with partial pivoting (double).
// Returns false when it is singular.
bool Solve8(double (&a)[8][8], double (&b)[8], double (&x)[8]) {
  for (int col = 0; col < 8; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 8; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    if (std::fabs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (int r = col + 1; r < 8; ++r) {
      const double f = a[r][col] / a[col][col];
      for (int k = col; k < 8; ++k) a[r][k] -= f * a[col][k];
      b[r] -= f * b[col];
    }
  }
  for (int r = 7; r >= 0; --r) {
    double sum = b[r];
    for (int k = r + 1; k < 8; ++k) sum -= a[r][k] * x[k];
    x[r] = sum / a[r][r];
  }
  return true;
}

}  // namespace

std::array<double, 6> InverseAffineMatrix(double angle, double translate_x, double translate_y,
                                          double scale, double shear_x, double shear_y,
                                          double center_x, double center_y) {
  const double rot = Radians(angle), sx = Radians(shear_x), sy = Radians(shear_y);
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0};
  m[2] += m[0] * (-center_x - translate_x) + m[1] * (-center_y - translate_y);
  m[5] += m[3] * (-center_x - translate_x) + m[4] * (-center_y - translate_y);
  m[2] += center_x;
  m[5] += center_y;
  return m;
}

void AffineWarp(const ImageView& in, const std::array<double, 6>& matrix, bool bilinear,
                const float* fill, const ImageView& out) {
  // theta in float32, divided by (0.5 w, 0.5 h) as torchvision's rescaled_theta; the base grid
  // is centred (x - w/2, y - h/2).
  const float w = static_cast<float>(in.shape.width), h = static_cast<float>(in.shape.height);
  float r[6];
  for (int k = 0; k < 3; ++k) {
    r[k] = static_cast<float>(matrix[k]) / (0.5f * w);
    r[3 + k] = static_cast<float>(matrix[3 + k]) / (0.5f * h);
  }
  WarpAny(
      in,
      [&r, w, h](float px, float py, float* gx, float* gy) {
        const float x = -w * 0.5f + px, y = -h * 0.5f + py;
        *gx = x * r[0] + y * r[1] + r[2];
        *gy = x * r[3] + y * r[4] + r[5];
      },
      bilinear, fill, out);
}

bool PerspectiveCoefficients(const std::array<double, 8>& startpoints,
                             const std::array<double, 8>& endpoints,
                             std::array<double, 8>* coefficients) {
  double a[8][8], b[8], x[8];
  for (int i = 0; i < 4; ++i) {
    const double ex = endpoints[2 * i], ey = endpoints[2 * i + 1];
    const double sx = startpoints[2 * i], sy = startpoints[2 * i + 1];
    const double row0[8] = {ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey};
    const double row1[8] = {0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey};
    std::copy(row0, row0 + 8, a[2 * i]);
    std::copy(row1, row1 + 8, a[2 * i + 1]);
    b[2 * i] = sx;
    b[2 * i + 1] = sy;
  }
  if (!Solve8(a, b, x)) return false;
  // torchvision solves in float32 and hands the floats on.
  for (int k = 0; k < 8; ++k) (*coefficients)[k] = static_cast<float>(x[k]);
  return true;
}

void PerspectiveWarp(const ImageView& in, const std::array<double, 8>& c, bool bilinear,
                     const float* fill, const ImageView& out) {
  // _perspective_grid: theta1 rescaled by (0.5 w, 0.5 h), theta2 = (c6, c7, 1), in float32.
  const float w = static_cast<float>(in.shape.width), h = static_cast<float>(in.shape.height);
  const float t1[6] = {
      static_cast<float>(c[0]) / (0.5f * w), static_cast<float>(c[1]) / (0.5f * w),
      static_cast<float>(c[2]) / (0.5f * w), static_cast<float>(c[3]) / (0.5f * h),
      static_cast<float>(c[4]) / (0.5f * h), static_cast<float>(c[5]) / (0.5f * h)};
  const float c6 = static_cast<float>(c[6]), c7 = static_cast<float>(c[7]);
  WarpAny(
      in,
      [&t1, c6, c7](float x, float y, float* gx, float* gy) {
        const float denominator = x * c6 + y * c7 + 1.0f;
        *gx = (x * t1[0] + y * t1[1] + t1[2]) / denominator - 1.0f;
        *gy = (x * t1[3] + y * t1[4] + t1[5]) / denominator - 1.0f;
      },
      bilinear, fill, out);
}

}  // namespace stoker
