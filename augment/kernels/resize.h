#ifndef STOKER_AUGMENT_KERNELS_RESIZE_H_
#define STOKER_AUGMENT_KERNELS_RESIZE_H_

// Resampling a window of an image to another size, through OpenCV's cv::resize (whose
// exceptions stop here):
//
//   kBilinear  OpenCV INTER_LINEAR: half-pixel centers, no antialiasing (torchvision's
//              Resize(antialias=False) on tensors, up to rounding of uint8 results). 3-channel
//              uint8 goes through ResizeLinearRgb (resize_linear_rgb.h), bit-equal to it.
//   kArea      OpenCV INTER_AREA: each output pixel averages the input area it covers; the
//              right filter for shrinking (bilinear when enlarging).
//   kAntialias PIL's bilinear resampling (resize_antialias.h): a triangle filter widened by the
//              shrink factor; equal to PIL's Image.resize(BILINEAR) for uint8, hence to
//              torchvision's Resize / RandomResizedCrop on PIL images (antialias=True on
//              tensors, float32).
//
// Thread-safe on distinct outputs. cv::resize may allocate small internal buffers.

#include <cstdint>

#include "absl/status/status.h"
#include "image/image.h"

namespace stoker {

enum class Interpolation { kBilinear = 0, kArea = 1, kAntialias = 2 };

// Resamples `region` of `in` to the whole of `out`.
// REQUIRES: out has in's type and channels (1 to 4); region is non-empty and inside `in`;
//   `in` and `out` do not overlap.
// Errors: INTERNAL when OpenCV throws.
absl::Status Resize(const ImageView& in, const PixelRect& region, Interpolation interpolation,
                    const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_RESIZE_H_
