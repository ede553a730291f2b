#ifndef STOKER_AUGMENT_KERNELS_WARP_H_
#define STOKER_AUGMENT_KERNELS_WARP_H_

// Affine warps as torchvision's tensor path does them (F.affine / F.rotate on tensors:
// _get_inverse_affine_matrix, _gen_affine_grid, grid_sample with align_corners=False and zero
// padding, then the fill blended through a mask): same size out as in, nearest or bilinear.
// Pure functions: no allocation; thread-safe on distinct outputs.

#include <array>

#include "image/image.h"

namespace stoker {

// torchvision's _get_inverse_affine_matrix(center, angle, translate, scale, shear), in degrees
// and pixels: maps output pixel coordinates (relative to the image centre) to input ones.
// `center` is relative to the image centre too (F.affine's center=None is (0, 0); its
// center=[0, 0], the top-left corner, is (-w/2, -h/2)). F.rotate(angle) is
// InverseAffineMatrix(-angle, 0, 0, 1, 0, 0).
std::array<double, 6> InverseAffineMatrix(double angle, double translate_x, double translate_y,
                                          double scale, double shear_x, double shear_y,
                                          double center_x = 0, double center_y = 0);

// Samples `in` through `matrix` into `out`: bilinear (else nearest, rounding half to even);
// where the sample falls outside the image the value is `fill` per channel (bilinear: blended
// by the inside weight, as torchvision's mask), or 0 when `fill` is null. uint8 results are
// rounded half to even.
// REQUIRES: out.shape == in.shape; `in` and `out` do not overlap; fill null or one value per
//   channel.
void AffineWarp(const ImageView& in, const std::array<double, 6>& matrix, bool bilinear,
                const float* fill, const ImageView& out);

// torchvision's _get_perspective_coeffs(startpoints, endpoints): the 8 coefficients of the
// perspective that maps each end point (x, y) to its start point, as points (x0, y0, ..., x3,
// y3). Solved in double, kept as float32 values (torchvision solves in float32). Returns false
// when the points are degenerate (the system is singular).
bool PerspectiveCoefficients(const std::array<double, 8>& startpoints,
                             const std::array<double, 8>& endpoints,
                             std::array<double, 8>* coefficients);

// F.perspective on tensors: output pixel (x, y) (centres at +0.5) samples `in` at
// ((c0 x + c1 y + c2) / (c6 x + c7 y + 1), (c3 x + c4 y + c5) / (c6 x + c7 y + 1)), nearest or
// bilinear, `fill` as AffineWarp. REQUIRES: as AffineWarp.
void PerspectiveWarp(const ImageView& in, const std::array<double, 8>& coefficients, bool bilinear,
                     const float* fill, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_WARP_H_
