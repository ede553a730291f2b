#ifndef STOKER_AUGMENT_KERNELS_ERASE_H_
#define STOKER_AUGMENT_KERNELS_ERASE_H_

// torchvision's F.erase: overwrite a rectangle of an image with given values. Pure function: no
// allocation, thread-safe on distinct images.

#include <cstddef>

#include "augment/kernels/resize.h"
#include "image/image.h"

namespace stoker {

// Writes `values` into `rect` of `image` (in place): one value per channel when !per_pixel,
// else rect.height × rect.width × channels values (HWC). uint8 images get each value rounded
// and clamped to 0..255.
// REQUIRES: rect inside the image.
void EraseRect(const ImageView& image, const PixelRect& rect, const float* values, bool per_pixel);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_ERASE_H_
