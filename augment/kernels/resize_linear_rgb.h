#ifndef STOKER_AUGMENT_KERNELS_RESIZE_LINEAR_RGB_H_
#define STOKER_AUGMENT_KERNELS_RESIZE_LINEAR_RGB_H_

// Bilinear resampling of 3-channel uint8 images with SSSE3, AVX2 or AVX-512 (the best the CPU
// has, chosen at run time; every build does the same integer steps), bit-equal to OpenCV 4's
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

namespace resize_internal {

// The builds ResizeLinearRgb chooses from, best first when the CPU supports it (AVX-512: F, BW
// and VL; the horizontal pass does 4 output columns per vector, AVX2 2, SSSE3 1). Exposed so
// that tests can check each against OpenCV.
enum class LinearRgbIsa { kAvx512, kAvx2, kSsse3 };

bool CpuSupports(LinearRgbIsa isa);

// ResizeLinearRgb with the given build. REQUIRES: CpuSupports(isa), and ResizeLinearRgb's.
void ResizeLinearRgbWith(LinearRgbIsa isa, const ImageView& in, const PixelRect& region,
                         const ImageView& out);

}  // namespace resize_internal

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_RESIZE_LINEAR_RGB_H_
