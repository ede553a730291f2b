#ifndef STOKER_AUGMENT_KERNELS_COLOR_H_
#define STOKER_AUGMENT_KERNELS_COLOR_H_

// Colour kernels with torchvision's tensor semantics (torchvision.transforms.functional):
//
//   gray(p)           = 0.2989 r + 0.587 g + 0.114 b  (rgb_to_grayscale; a 1-channel pixel is
//                       its own gray)
//   blend(a, b, f)    = clamp(f a + (1 - f) b, 0, max)   max = 1 (float32) or 255 (uint8)
//   brightness(f)     = blend(p, 0, f)
//   contrast(f)       = blend(p, mean of gray over the image, f)
//   saturation(f)     = blend(p, gray(p), f)
//
// For uint8 images every result is truncated toward zero to uint8 (torchvision's .to(uint8)),
// gray values too, before they are used (as torchvision does). Computation is in float.
// Pure functions: no allocation; thread-safe on distinct outputs; `out` may be `in` (in place)
// or must not overlap it.

#include "image/image.h"

namespace stoker {

// Writes gray(in) to every channel of `out`.
// REQUIRES: in.shape.channels is 1 or 3; out has in's size and type, 1 or 3 channels; when
//   out.data == in.data, the channel counts are equal.
void Grayscale(const ImageView& in, const ImageView& out);

// REQUIRES (all three): out.shape == in.shape; 1 or 3 channels; factor >= 0.
void AdjustBrightness(const ImageView& in, float factor, const ImageView& out);
void AdjustContrast(const ImageView& in, float factor, const ImageView& out);
// torchvision adjust_hue on tensors: RGB → HSV (torchvision's float32 formulas), hue shifted by
// hue_factor (in [-0.5, 0.5]) modulo 1, back to RGB; uint8 goes through x / 255 and back as
// convert_image_dtype does (x * 255.999, truncated). Gray (1 channel) is copied unchanged.
// REQUIRES: 1 or 3 channels; out has in's shape; `out` may be `in`; float32 values finite.
void AdjustHue(const ImageView& in, float hue_factor, const ImageView& out);

void AdjustSaturation(const ImageView& in, float factor, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_COLOR_H_
