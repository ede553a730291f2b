#ifndef STOKER_AUGMENT_KERNELS_PIXEL_LOOPS_H_
#define STOKER_AUGMENT_KERNELS_PIXEL_LOOPS_H_

// The inner loops of the colour, tone and warp kernels (color.cc, tone.cc, warp.cc), written so
// that the compiler vectorizes them, and built three times from one source
// (pixel_loops_body.inc): for the baseline x86-64 target (SSE2; also every other architecture),
// with AVX2 + FMA, and with AVX-512 (F, VL, BW). ActivePixelLoops() picks the best build this CPU
// runs, once. All builds compile with -ffp-contract=off and do the float operations of the
// scalar formulas named below in the same order (std::fma only where the formula has one), so
// every build gives the same results bit for bit: the kernels' outputs do not depend on the CPU.
//
// Pure functions on caller-owned arrays; thread-safe; `in` and `out` may be the same array
// (in place) where said, never otherwise overlapping.

#include <cstddef>
#include <cstdint>

namespace stoker {
namespace pixel_loops {

// torchvision's gray weights (rgb_to_grayscale).
inline constexpr float kRed = 0.2989f, kGreen = 0.587f, kBlue = 0.114f;

// std::nearbyint in the default rounding mode, for |v| <= 2^22: v + 1.5 * 2^23 lands where the
// float spacing is 1, so the addition rounds v half to even (the constant is even), and the
// subtraction is exact. Vectorizes where std::nearbyint is a library call.
inline float RoundHalfEven(float v) {
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

struct PixelLoops {
  const char* name;  // "portable", "avx2", "avx512"

  // out[i] = clamp(int32(factor * in[i] + offset), 0, 255) (truncation toward zero: torchvision's
  // _blend with a constant `other`, offset = (1 - factor) * other). In place allowed.
  void (*blend_constant_u8)(const uint8_t* in, size_t n, float factor, float offset, uint8_t* out);

  // Sum over RGB pixels of int32(kRed r + kGreen g + kBlue b) (the uint8 gray, truncated).
  uint64_t (*gray_sum_rgb_u8)(const uint8_t* in, size_t pixels);

  // Per RGB pixel, gray = int32(kRed r + kGreen g + kBlue b); each channel
  // x -> clamp(int32(factor * x + (1 - factor) * gray), 0, 255). In place allowed.
  void (*blend_gray_rgb_u8)(const uint8_t* in, size_t pixels, float factor, uint8_t* out);

  // torchvision's adjust_hue on uint8 RGB pixels (color.h AdjustHue): x / 255, RGB -> HSV, hue
  // + hue_factor modulo 1, HSV -> RGB, x * 255.999 truncated. In place allowed.
  void (*shift_hue_rgb_u8)(const uint8_t* in, size_t pixels, float hue_factor, uint8_t* out);

  // The same on float32 RGB pixels (no conversion). Equal to the scalar formula for finite
  // values whose differences are finite. In place allowed.
  void (*shift_hue_rgb_f32)(const float* in, size_t pixels, float hue_factor, float* out);

  // Per channel (`channels` 1 or 3, interleaved), the smallest and largest value over `pixels`
  // pixels (pixels >= 1) into low[c], high[c].
  void (*min_max_u8)(const uint8_t* in, size_t pixels, size_t channels, uint8_t* low,
                     uint8_t* high);

  // Per value of channel c (`channels` 1 or 3): x -> uint8(clamp((x - offset[c]) * scale[c],
  // 0, 255)), truncated (autocontrast). In place allowed.
  void (*scale_offset_u8)(const uint8_t* in, size_t pixels, size_t channels, const float* offset,
                          const float* scale, uint8_t* out);

  // adjust_sharpness on values first..last-1 of an interior row (uint8, `channels` values per
  // pixel, `stride` values per row; `row` points at the row, the rows above and below are
  // row -/+ stride): smooth = the 3x3 sum of v * (1/13, centre 5/13) in row-major order from
  // 0.0f, rounded half to even; out[i] = clamp(keep * row[i] + mix * smooth, 0, 255) truncated.
  // REQUIRES: first >= channels, last <= stride - channels; `out` does not overlap `row`'s
  // neighbourhood.
  void (*sharpen_row_u8)(const uint8_t* row, size_t stride, size_t channels, size_t first,
                         size_t last, float keep, float mix, uint8_t* out);

  // grid_sample's input coordinates of output pixels first .. first + n - 1 of output row `row`
  // (pixel centres at +0.5) of an affine warp of a width x height image, `r` = theta rescaled
  // (warp.cc), written to ix[0 .. n), iy[0 .. n): x_j = -w/2 + (j + 0.5), y = -h/2 + (row + 0.5),
  // g = (x r0 + y r1) + r2 (and r3..r5 for y), then fma(g + 1, size / 2, -0.5), clamped to
  // [-2^22, 2^22] (beyond is outside any image these loops accept, either way).
  void (*affine_coords_row)(const float* r, int width, int height, int row, int first, int n,
                            float* ix, float* iy);

  // The same for a perspective warp (t = theta1 rescaled, c6, c7): with x = j + 0.5,
  // y = row + 0.5, d = (x c6 + y c7) + 1, g = ((x t0 + y t1) + t2) / d - 1 (t3..t5 for y).
  void (*perspective_coords_row)(const float* t, float c6, float c7, int width, int height, int row,
                                 int first, int n, float* ix, float* iy);

  // Nearest sampling: offsets[j] = (ny * width + nx) * channels for (nx, ny) = the coordinates
  // rounded half to even when inside the image, else -1.
  // REQUIRES: width, height < 2^22; coordinates from the *_coords_row loops (|v| <= 2^22).
  void (*nearest_offsets_row)(const float* ix, const float* iy, int n, int width, int height,
                              int channels, int32_t* offsets);

  // Bilinear sampling: x0 = floor(ix), fx = ix - x0 (and y). REQUIRES: as nearest_offsets_row;
  // the six arrays do not overlap.
  void (*floor_split_row)(const float* ix, const float* iy, int n, int32_t* x0, int32_t* y0,
                          float* fx, float* fy);
};

// The build for the baseline target; always available.
const PixelLoops& PortablePixelLoops();
// The AVX2 + FMA build, or null when this binary or this CPU has none.
const PixelLoops* Avx2PixelLoops();
// The AVX-512 (F, VL, BW) build, or null when this binary or this CPU has none.
const PixelLoops* Avx512PixelLoops();
// The best of the above for this CPU (chosen once).
const PixelLoops& ActivePixelLoops();

}  // namespace pixel_loops
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_PIXEL_LOOPS_H_
