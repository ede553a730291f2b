#ifndef STOKER_AUGMENT_OPS_OPS_H_
#define STOKER_AUGMENT_OPS_OPS_H_

// The built-in ops, one file each: each returns its schema, whose factory validates the proto
// and creates the Op. Used by augment/op_registry.cc only; everything else goes through the
// registry.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "augment/kernels/pad.h"
#include "augment/kernels/resize.h"
#include "augment/op_registry.h"
#include "image/image.h"

namespace stoker {

OpSchema DecodeOpSchema();
OpSchema ResizeOpSchema();
OpSchema CenterCropOpSchema();
OpSchema RandomResizedCropOpSchema();
OpSchema ColorJitterOpSchema();
OpSchema GrayscaleOpSchema();
OpSchema ToFloatOpSchema();
OpSchema GaussianBlurOpSchema();
OpSchema RandomCropOpSchema();
OpSchema HorizontalFlipOpSchema();
OpSchema VerticalFlipOpSchema();
OpSchema InvertOpSchema();
OpSchema PosterizeOpSchema();
OpSchema SolarizeOpSchema();
OpSchema AutocontrastOpSchema();
OpSchema RandomGrayscaleOpSchema();
OpSchema EqualizeOpSchema();
OpSchema AdjustSharpnessOpSchema();
OpSchema PadOpSchema();
OpSchema RandomErasingOpSchema();
OpSchema AdjustHueOpSchema();
OpSchema AffineOpSchema();
OpSchema RandomRotationOpSchema();
OpSchema RandomAffineOpSchema();
OpSchema NormalizeOpSchema();
OpSchema RandomPerspectiveOpSchema();
OpSchema RandomApplyOpSchema();
OpSchema RandomChoiceOpSchema();
OpSchema RandomOrderOpSchema();
OpSchema RandAugmentOpSchema();
OpSchema TrivialAugmentWideOpSchema();
OpSchema AutoAugmentOpSchema();
OpSchema AugMixOpSchema();
OpSchema SanitizeBoxesOpSchema();
OpSchema ZoomOutOpSchema();
OpSchema RandomIouCropOpSchema();

// OK when `input` has pixels of `type`; otherwise INVALID_ARGUMENT
// "requires <type> input, got <other><hint>".
inline absl::Status RequirePixelType(const ImageShape& input, PixelType type,
                                     absl::string_view hint = "") {
  if (input.type == type) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("requires ", PixelTypeName(type), " input, got ",
                                                 PixelTypeName(input.type), hint));
}

// The `interpolation` argument of resize and random_resized_crop: 0 bilinear, 1 area,
// 2 antialias (PIL's bilinear). Errors: INVALID_ARGUMENT "interpolation must be 0 (bilinear),
// 1 (area) or 2 (antialias, PIL's), got 7".
absl::StatusOr<Interpolation> ParseInterpolation(uint32_t value);

// For ops that produce a fixed `field` extent (height or width) from an input extent
// `input_value` (0: varies per sample, then only `value` > 0 is checked). Errors:
// INVALID_ARGUMENT "<field> must be > 0, got 0" or "<field> 30 exceeds the input <field> 24".
inline absl::Status CheckExtent(absl::string_view field, uint32_t value, uint32_t input_value) {
  if (value == 0) return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got 0"));
  if (input_value != 0 && value > input_value) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", value, " exceeds the input ", field, " ", input_value));
  }
  return absl::OkStatus();
}

// CheckExtent for a height × width window.
inline absl::Status CheckWindow(uint32_t height, uint32_t width, const ImageShape& input) {
  if (absl::Status s = CheckExtent("height", height, input.height); !s.ok()) return s;
  return CheckExtent("width", width, input.width);
}

// A per-channel list argument (fill, value): empty stays empty, one value is repeated for every
// channel, else it must have one value per channel. Errors: INVALID_ARGUMENT
// "<name> takes 1 value or one per channel (3), got 2".
absl::StatusOr<std::vector<float>> PerChannelValues(
    absl::string_view name, const google::protobuf::RepeatedField<float>& values,
    uint32_t channels);

// The padding arguments of pad and random_crop, torchvision's: `padding` 1 value (all sides),
// 2 (left/right, top/bottom) or 4 (left, top, right, bottom), or none; `fill` empty (0), one
// value or one per channel; padding_mode 0..3 (PadMode).
struct PadArgs {
  Padding padding;
  PadMode mode = PadMode::kConstant;
  std::vector<float> fill;  // One per channel.
};
// The padded shape, or "varies" (0) where the input's extent varies.
inline ImageShape PaddedOrVarying(const ImageShape& input, const Padding& p) {
  ImageShape out = PaddedShape(input, p);
  if (input.height == 0) out.height = 0;
  if (input.width == 0) out.width = 0;
  return out;
}
// Errors: INVALID_ARGUMENT naming the field ("padding values must be integers ...").
absl::StatusOr<PadArgs> ParsePadArgs(const google::protobuf::RepeatedField<float>& padding,
                                     const google::protobuf::RepeatedField<float>& fill,
                                     uint32_t padding_mode, const ImageShape& input);

// The interpolation and fill of the warping ops (affine, random_rotation, random_affine,
// random_perspective, and the policies' geometric operations).
struct WarpArgs {
  bool bilinear = false;
  std::vector<float> fill;  // Empty: none (zeros, no mask); else one per channel.
};
// Errors: INVALID_ARGUMENT "bilinear must be 0 or 1, got 2", or PerChannelValues' for fill.
absl::StatusOr<WarpArgs> ParseWarpArgs(uint32_t bilinear,
                                       const google::protobuf::RepeatedField<float>& fill,
                                       const ImageShape& input);

// Base of the ops that cut a fixed height × width window (center_crop, random_crop): the
// window must fit each input, which after decode is checked per sample.
class WindowOp : public Op {
 public:
  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    if (absl::Status s = CheckWindow(output_shape().height, output_shape().width, in); !s.ok()) {
      return s;
    }
    return output_shape();
  }

 protected:
  // REQUIRES: CheckWindow(height, width, input) is OK.
  WindowOp(std::string name, const ImageShape& input, uint32_t height, uint32_t width)
      : Op(std::move(name), input, ImageShape{height, width, input.channels, input.type}) {}
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_OPS_OPS_H_
