#include "augment/kernels/warp.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "augment/kernels/pixel_loops.h"

namespace stoker {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Radians(double degrees) { return degrees * kPi / 180.0; }

// Output pixels per chunk of a row: the coordinate arrays live on the stack.
constexpr int kChunk = 256;

template <typename T>
T Store(float v) {
  if constexpr (std::is_integral_v<T>) {
    // torch.round: half to even (the vectorizable form where it is exact).
    return static_cast<T>(std::fabs(v) <= 4194304.0f ? pixel_loops::RoundHalfEven(v)
                                                     : std::nearbyint(v));
  } else {
    return v;
  }
}

// Nearest: each output pixel copies its source pixel, or takes the fill (0 when null).
template <typename T>
void NearestChunk(const T* src, const int32_t* offsets, int n, size_t channels, const float* fill,
                  T* dst) {
  for (int j = 0; j < n; ++j, dst += channels) {
    if (offsets[j] < 0) {
      for (size_t c = 0; c < channels; ++c) dst[c] = Store<T>(fill != nullptr ? fill[c] : 0.0f);
    } else if (channels == 3) {  // the common case, unrolled
      const T* from = src + offsets[j];
      dst[0] = from[0];
      dst[1] = from[1];
      dst[2] = from[2];
    } else {
      std::copy(src + offsets[j], src + offsets[j] + channels, dst);
    }
  }
}

// NearestChunk for uint8 RGB: each pixel copied as four bytes (one load, one store; the fourth
// byte is the next pixel's first, which that pixel rewrites), three where the fourth would be
// read past the source or written past the chunk.
void NearestChunkRgb8(const uint8_t* src, size_t src_size, const int32_t* offsets, int n,
                      const float* fill, uint8_t* dst) {
  uint8_t fill_pixel[4] = {0, 0, 0, 0};
  for (int c = 0; c < 3; ++c) fill_pixel[c] = Store<uint8_t>(fill != nullptr ? fill[c] : 0.0f);
  for (int j = 0; j < n; ++j, dst += 3) {
    const int32_t offset = offsets[j];
    const uint8_t* from = offset < 0 ? fill_pixel : src + offset;
    if (j + 1 < n && (offset < 0 || static_cast<size_t>(offset) + 4 <= src_size)) {
      std::memcpy(dst, from, 4);
    } else {
      dst[0] = from[0];
      dst[1] = from[1];
      dst[2] = from[2];
    }
  }
}

// Bilinear: per channel, the sum of weight x value over the in-bounds neighbours (in the order
// (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)); with a fill, blended with it by the
// in-bounds weight (torchvision's mask channel).
template <typename T>
void BilinearPixel(const T* src, int w, int h, size_t channels, int32_t x0, int32_t y0, float fx,
                   float fy, const float* fill, T* dst) {
  const float wx[2] = {1.0f - fx, fx}, wy[2] = {1.0f - fy, fy};
  float k[4];
  const T* tap[4];
  float inside = 0.0f;
  for (int t = 0; t < 4; ++t) {
    const int32_t x = x0 + (t & 1), y = y0 + (t >> 1);
    const bool in_bounds = static_cast<uint32_t>(x) < static_cast<uint32_t>(w) &&
                           static_cast<uint32_t>(y) < static_cast<uint32_t>(h);
    k[t] = wx[t & 1] * wy[t >> 1];
    tap[t] = in_bounds ? src + (static_cast<size_t>(y) * w + x) * channels : nullptr;
    if (in_bounds) inside += k[t];
  }
  for (size_t c = 0; c < channels; ++c) {
    float sum = 0.0f;
    for (int t = 0; t < 4; ++t) {
      if (tap[t] != nullptr) sum += k[t] * static_cast<float>(tap[t][c]);
    }
    if (fill != nullptr) sum = sum * inside + (1.0f - inside) * fill[c];
    dst[c] = Store<T>(sum);
  }
}

// Samples `in` at grid_sample's input position of each output pixel: `coords(row, first, n, ix,
// iy)` gives the input coordinates of output pixels first .. first + n - 1 of `row` (a
// pixel_loops *_coords_row loop: the grid and its unnormalization, align_corners=False).
template <typename T, typename Coords>
void Warp(const ImageView& in, Coords coords, bool bilinear, const float* fill,
          const ImageView& out) {
  const int w = static_cast<int>(in.shape.width), h = static_cast<int>(in.shape.height);
  const size_t channels = in.shape.channels;
  const T* src = in.pixels<const T>();
  T* dst = out.pixels<T>();
  const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
  float ix[kChunk], iy[kChunk], fx[kChunk], fy[kChunk];
  int32_t offsets[kChunk], y0[kChunk];
  for (int i = 0; i < h; ++i) {
    for (int first = 0; first < w; first += kChunk) {
      const int n = std::min(kChunk, w - first);
      coords(i, first, n, ix, iy);
      T* pixel = dst + (static_cast<size_t>(i) * w + first) * channels;
      if (!bilinear) {
        loops.nearest_offsets_row(ix, iy, n, w, h, static_cast<int>(channels), offsets);
        if constexpr (std::is_same_v<T, uint8_t>) {
          if (channels == 3) {
            NearestChunkRgb8(src, in.shape.elements(), offsets, n, fill, pixel);
            continue;
          }
        }
        NearestChunk(src, offsets, n, channels, fill, pixel);
        continue;
      }
      loops.floor_split_row(ix, iy, n, offsets, y0, fx, fy);
      for (int j = 0; j < n; ++j, pixel += channels) {
        BilinearPixel(src, w, h, channels, offsets[j], y0[j], fx[j], fy[j], fill, pixel);
      }
    }
  }
}

template <typename Coords>
void WarpAny(const ImageView& in, Coords coords, bool bilinear, const float* fill,
             const ImageView& out) {
  if (in.shape.type == PixelType::kUint8) return Warp<uint8_t>(in, coords, bilinear, fill, out);
  Warp<float>(in, coords, bilinear, fill, out);
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
  const int width = static_cast<int>(in.shape.width), height = static_cast<int>(in.shape.height);
  const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
  WarpAny(
      in,
      [&](int row, int first, int n, float* ix, float* iy) {
        loops.affine_coords_row(r, width, height, row, first, n, ix, iy);
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
  const int width = static_cast<int>(in.shape.width), height = static_cast<int>(in.shape.height);
  const pixel_loops::PixelLoops& loops = pixel_loops::ActivePixelLoops();
  WarpAny(
      in,
      [&](int row, int first, int n, float* ix, float* iy) {
        loops.perspective_coords_row(t1, c6, c7, width, height, row, first, n, ix, iy);
      },
      bilinear, fill, out);
}

}  // namespace stoker
