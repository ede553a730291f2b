#ifndef STOKER_AUGMENT_KERNELS_RESIZE_LINEAR_RGB_H_
#define STOKER_AUGMENT_KERNELS_RESIZE_LINEAR_RGB_H_

// Bilinear resampling of 3-channel uint8 images with SSSE3, bit-equal to OpenCV 4's
// cv::resize(INTER_LINEAR) on CV_8UC3 (its fixed-point path: 11-bit coefficients rounded from
// float, horizontal sums in int32, the vertical step as OpenCV's VResizeLinear for uchar computes
// it, edge rows and columns clamped as OpenCV clamps them). Used by Resize (resize.h) for the
// JPEG pipelines' random_resized_crop; resize_linear_rgb_test.cc compares it with cv::resize on
// random sizes and windows. Pure function; thread-safe on distinct outputs; allocates only its
// small coefficient tables and two rows.

#include "image/image.h"

namespace stoker {

// True when ResizeLinearRgb handles this resize: the CPU has SSSE3, the pixels are uint8 with 3
// channels, and it is not an exact 2x shrink in both dimensions (which OpenCV runs as INTER_AREA).
bool ResizeLinearRgbApplies(const ImageShape& in, const PixelRect& region, const ImageShape& out);

// Resamples `region` of `in` to the whole of `out`, as cv::resize(INTER_LINEAR) would.
// REQUIRES: ResizeLinearRgbApplies(in.shape, region, out.shape); region non-empty, inside `in`;
//   `in` and `out` do not overlap.
void ResizeLinearRgb(const ImageView& in, const PixelRect& region, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_RESIZE_LINEAR_RGB_H_
