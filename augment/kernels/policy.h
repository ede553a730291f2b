#ifndef STOKER_AUGMENT_KERNELS_POLICY_H_
#define STOKER_AUGMENT_KERNELS_POLICY_H_

// The image operations of torchvision's automatic augmentation policies (AutoAugment,
// RandAugment, TrivialAugmentWide, AugMix): torchvision.transforms.autoaugment._apply_op on a
// uint8 tensor, composed from the existing kernels (warp, color, tone). The tables of which
// operation at which magnitude live with the ops (augment/ops/policy_space.h).
// Pure functions: no allocation; thread-safe on distinct outputs.

#include <cstdint>

#include "image/image.h"

namespace stoker {

// In torchvision's order of RandAugment's op table (Invert last: AutoAugment's only).
enum class PolicyOp : uint8_t {
  kIdentity,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kRotate,
  kBrightness,
  kColor,
  kContrast,
  kSharpness,
  kPosterize,
  kSolarize,
  kAutoContrast,
  kEqualize,
  kInvert,
};

// torchvision's name ("ShearX", ...).
const char* PolicyOpName(PolicyOp op);

// _apply_op(img, op, magnitude, interpolation, fill):
//   ShearX / ShearY   F.affine(shear = degrees(atan(magnitude)) along x / y, center=[0, 0])
//   TranslateX / Y    F.affine(translate = int(magnitude) pixels along x / y)
//   Rotate            F.rotate(magnitude degrees)
//   Brightness, Color (saturation), Contrast, Sharpness: factor 1 + magnitude
//   Posterize         int(magnitude) bits;  Solarize  threshold magnitude
//   AutoContrast, Equalize, Invert, Identity: no magnitude.
// Warps are nearest unless `bilinear`; outside pixels are `fill` (one per channel, blended by
// coverage when bilinear) or 0 when `fill` is null.
// REQUIRES: uint8, 1 or 3 channels; out.shape == in.shape; `out` does not overlap `in`.
void ApplyPolicyOp(PolicyOp op, double magnitude, bool bilinear, const float* fill,
                   const ImageView& in, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_POLICY_H_
