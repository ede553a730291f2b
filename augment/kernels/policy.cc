#include "augment/kernels/policy.h"

#include <cmath>
#include <cstring>

#include "augment/kernels/color.h"
#include "augment/kernels/tone.h"
#include "augment/kernels/warp.h"

namespace stoker {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Degrees(double radians) { return radians * 180.0 / kPi; }

}  // namespace

const char* PolicyOpName(PolicyOp op) {
  static constexpr const char* kNames[] = {"Identity",     "ShearX",    "ShearY",     "TranslateX",
                                           "TranslateY",   "Rotate",    "Brightness", "Color",
                                           "Contrast",     "Sharpness", "Posterize",  "Solarize",
                                           "AutoContrast", "Equalize",  "Invert"};
  return kNames[static_cast<int>(op)];
}

void ApplyPolicyOp(PolicyOp op, double magnitude, bool bilinear, const float* fill,
                   const ImageView& in, const ImageView& out) {
  // F.affine's center=[0, 0] (the shears) is the top-left corner: (-w/2, -h/2) from the centre.
  const double corner_x = -0.5 * in.shape.width, corner_y = -0.5 * in.shape.height;
  const double shear = Degrees(std::atan(magnitude));
  const float factor = static_cast<float>(1.0 + magnitude);
  switch (op) {
    case PolicyOp::kShearX:
      return AffineWarp(in, InverseAffineMatrix(0, 0, 0, 1, shear, 0, corner_x, corner_y), bilinear,
                        fill, out);
    case PolicyOp::kShearY:
      return AffineWarp(in, InverseAffineMatrix(0, 0, 0, 1, 0, shear, corner_x, corner_y), bilinear,
                        fill, out);
    case PolicyOp::kTranslateX:
      return AffineWarp(in, InverseAffineMatrix(0, std::trunc(magnitude), 0, 1, 0, 0), bilinear,
                        fill, out);
    case PolicyOp::kTranslateY:
      return AffineWarp(in, InverseAffineMatrix(0, 0, std::trunc(magnitude), 1, 0, 0), bilinear,
                        fill, out);
    case PolicyOp::kRotate:
      return AffineWarp(in, InverseAffineMatrix(-magnitude, 0, 0, 1, 0, 0), bilinear, fill, out);
    case PolicyOp::kBrightness:
      return AdjustBrightness(in, factor, out);
    case PolicyOp::kColor:
      return AdjustSaturation(in, factor, out);
    case PolicyOp::kContrast:
      return AdjustContrast(in, factor, out);
    case PolicyOp::kSharpness:
      return AdjustSharpness(in, factor, out);
    case PolicyOp::kPosterize:
      return Posterize(in, static_cast<uint32_t>(magnitude), out);
    case PolicyOp::kSolarize:
      return Solarize(in, static_cast<float>(magnitude), out);
    case PolicyOp::kAutoContrast:
      return Autocontrast(in, out);
    case PolicyOp::kEqualize:
      return Equalize(in, out);
    case PolicyOp::kInvert:
      return Invert(in, out);
    case PolicyOp::kIdentity:
      break;
  }
  std::memcpy(out.data, in.data, in.shape.bytes());
}

}  // namespace stoker
