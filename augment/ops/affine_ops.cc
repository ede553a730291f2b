// affine and random_rotation: torchvision's F.affine and RandomRotation on tensors (same size
// out, centre of the image, nearest or bilinear, optional fill), through AffineWarp.

#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "augment/kernels/warp.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

struct WarpArgs {
  bool bilinear = false;
  std::vector<float> fill;  // Empty: none (zeros, no mask); else one per channel.
};

class AffineOp final : public Op {
 public:
  // A fixed matrix (affine), or, with a degree range, a rotation drawn per sample.
  AffineOp(std::string name, const ImageShape& input, WarpArgs warp,
           std::array<double, 6> matrix, float degrees_min, float degrees_max, bool random)
      : Op(std::move(name), input, input),
        warp_(std::move(warp)),
        matrix_(matrix),
        degrees_min_(degrees_min),
        degrees_max_(degrees_max),
        random_(random) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    std::array<double, 6> matrix = matrix_;
    if (random_) {  // One draw (op.h); F.rotate turns the other way than F.affine.
      matrix = InverseAffineMatrix(-rng->UniformFloat(degrees_min_, degrees_max_), 0, 0, 1, 0, 0);
    }
    AffineWarp(in, matrix, warp_.bilinear, warp_.fill.empty() ? nullptr : warp_.fill.data(), out);
    return absl::OkStatus();
  }

 private:
  const WarpArgs warp_;
  const std::array<double, 6> matrix_;
  const float degrees_min_, degrees_max_;
  const bool random_;
};

absl::StatusOr<WarpArgs> ParseWarpArgs(uint32_t bilinear,
                                       const google::protobuf::RepeatedField<float>& fill,
                                       const ImageShape& input) {
  if (bilinear > 1) {
    return absl::InvalidArgumentError(absl::StrCat("bilinear must be 0 or 1, got ", bilinear));
  }
  WarpArgs args;
  args.bilinear = bilinear == 1;
  ASSIGN_OR_RETURN(args.fill, PerChannelValues("fill", fill, input.channels));
  return args;
}

// A pair argument (translate, shear): empty is (0, 0), one value is (v, 0) as torchvision's
// shear, two are (x, y).
absl::StatusOr<std::array<double, 2>> Pair(const char* name,
                                           const google::protobuf::RepeatedField<float>& v) {
  if (v.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(name, " takes 0 to 2 values, got ", v.size()));
  }
  return std::array<double, 2>{v.size() > 0 ? v[0] : 0.0, v.size() > 1 ? v[1] : 0.0};
}

absl::StatusOr<std::unique_ptr<Op>> CreateAffineOp(const v1::Op& op, const ImageShape& input) {
  const v1::AffineOp& a = op.affine();
  ASSIGN_OR_RETURN(WarpArgs warp, ParseWarpArgs(a.bilinear(), a.fill(), input));
  ASSIGN_OR_RETURN(const auto translate, Pair("translate", a.translate()));
  ASSIGN_OR_RETURN(const auto shear, Pair("shear", a.shear()));
  const double scale = a.has_scale() ? a.scale() : 1.0;
  if (!(scale > 0)) return absl::InvalidArgumentError(absl::StrCat("scale must be > 0, got ", scale));
  const std::array<double, 6> matrix =
      InverseAffineMatrix(a.angle(), translate[0], translate[1], scale, shear[0], shear[1]);
  return std::make_unique<AffineOp>("affine", input, std::move(warp), matrix, 0, 0, false);
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomRotationOp(const v1::Op& op,
                                                           const ImageShape& input) {
  const v1::RandomRotationOp& a = op.random_rotation();
  ASSIGN_OR_RETURN(WarpArgs warp, ParseWarpArgs(a.bilinear(), a.fill(), input));
  if (!(a.degrees_min() <= a.degrees_max())) {
    return absl::InvalidArgumentError(absl::StrCat("degrees_min must be <= degrees_max, got ",
                                                   a.degrees_min(), " and ", a.degrees_max()));
  }
  return std::make_unique<AffineOp>("random_rotation", input, std::move(warp),
                                    std::array<double, 6>{}, a.degrees_min(), a.degrees_max(),
                                    true);
}

}  // namespace

OpSchema AffineOpSchema() {
  return OpSchema{
      "affine", v1::Op::kAffine,
      "torchvision F.affine on tensors: rotation by angle (degrees, counter-clockwise), "
      "translation in pixels, scale and shear (degrees) about the centre; same size out; "
      "nearest (default, as torchvision) or bilinear=1; outside pixels are fill (blended by "
      "coverage when bilinear) or 0 when fill is empty.",
      {{"angle", ArgType::kFloat, "0", "Degrees."},
       {"translate", ArgType::kFloatList, "[]", "(x, y) pixels."},
       {"scale", ArgType::kFloat, "1", "> 0."},
       {"shear", ArgType::kFloatList, "[]", "(x, y) degrees; one value is x."},
       {"bilinear", ArgType::kInt, "0", "0 nearest, 1 bilinear."},
       {"fill", ArgType::kFloatList, "[]", "Empty (zeros), 1 value or one per channel."}},
      &CreateAffineOp};
}

OpSchema RandomRotationOpSchema() {
  return OpSchema{
      "random_rotation", v1::Op::kRandomRotation,
      "torchvision RandomRotation on tensors (expand=False, centre): an angle drawn from "
      "[degrees_min, degrees_max] per sample, then as affine.",
      {{"degrees_min", ArgType::kFloat, "", "Smallest angle, degrees."},
       {"degrees_max", ArgType::kFloat, "", "Largest angle, degrees."},
       {"bilinear", ArgType::kInt, "0", "0 nearest, 1 bilinear."},
       {"fill", ArgType::kFloatList, "[]", "Empty (zeros), 1 value or one per channel."}},
      &CreateRandomRotationOp};
}

}  // namespace stoker
