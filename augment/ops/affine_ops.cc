// affine, random_rotation and random_affine: torchvision's F.affine, RandomRotation and
// RandomAffine on tensors (same size out, centre of the image, nearest or bilinear, optional
// fill), through AffineWarp.

#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "augment/kernels/warp.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// The parameter ranges of a random warp (RandomAffine's get_params; RandomRotation uses only
// the degrees, with the angle negated as F.rotate does).
struct AffineRanges {
  float degrees[2] = {0, 0};
  bool rotation = false;          // F.rotate's sign
  float translate[2] = {-1, -1};  // fractions of width and height; < 0: no draw
  float scale[2] = {0, 0};        // 0: no draw (scale 1)
  int shears = 0;                 // 0, 2 (x) or 4 (x, y) values in `shear`
  float shear[4] = {0, 0, 0, 0};
};

class AffineOp final : public Op, public DrawsParams {
 public:
  // A fixed matrix (affine), or parameters drawn per sample from `ranges` (random_*).
  AffineOp(std::string name, const ImageShape& input, WarpArgs warp, std::array<double, 6> matrix,
           std::optional<AffineRanges> ranges)
      : Op(std::move(name), input, input),
        warp_(std::move(warp)),
        matrix_(matrix),
        ranges_(ranges) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    AffineWarp(in, DrawMatrix(in.shape, rng), warp_.bilinear,
               warp_.fill.empty() ? nullptr : warp_.fill.data(), out);
    return absl::OkStatus();
  }

  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    moves->push_back(AffineMove(in.height, in.width, DrawMatrix(in, rng)));
  }

  // random_rotation: [angle]; random_affine: [angle, tx, ty, scale, shear x, shear y]; affine
  // draws none (empty).
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    if (!ranges_) return {};
    const std::array<double, 6> p = Draw(*ranges_, in, rng);
    if (ranges_->rotation) return {p[0]};
    return std::vector<double>(p.begin(), p.end());
  }

 private:
  // The warp's matrix: the fixed one, or one from drawn parameters.
  std::array<double, 6> DrawMatrix(const ImageShape& in, CounterRng* rng) const {
    if (!ranges_) return matrix_;
    const std::array<double, 6> p = Draw(*ranges_, in, rng);
    return InverseAffineMatrix(ranges_->rotation ? -p[0] : p[0], p[1], p[2], p[3], p[4], p[5]);
  }

  // Draws (op.h) in torchvision's order: angle; tx, ty (rounded half to even); scale; shear x,
  // then y; each only when its range is set. Returns them in that order (angle as drawn, not
  // yet negated for a rotation).
  static std::array<double, 6> Draw(const AffineRanges& r, const ImageShape& shape,
                                    CounterRng* rng) {
    const double angle = rng->UniformFloat(r.degrees[0], r.degrees[1]);
    double t[2] = {0, 0};
    if (r.translate[0] >= 0) {
      const float max_dx = r.translate[0] * static_cast<float>(shape.width);
      const float max_dy = r.translate[1] * static_cast<float>(shape.height);
      t[0] = std::nearbyint(rng->UniformFloat(-max_dx, max_dx));
      t[1] = std::nearbyint(rng->UniformFloat(-max_dy, max_dy));
    }
    const double scale = r.scale[0] > 0 ? rng->UniformFloat(r.scale[0], r.scale[1]) : 1.0;
    double shear[2] = {0, 0};
    if (r.shears >= 2) shear[0] = rng->UniformFloat(r.shear[0], r.shear[1]);
    if (r.shears == 4) shear[1] = rng->UniformFloat(r.shear[2], r.shear[3]);
    return {angle, t[0], t[1], scale, shear[0], shear[1]};
  }

  const WarpArgs warp_;
  const std::array<double, 6> matrix_;
  const std::optional<AffineRanges> ranges_;
};

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
  if (!(scale > 0))
    return absl::InvalidArgumentError(absl::StrCat("scale must be > 0, got ", scale));
  const std::array<double, 6> matrix =
      InverseAffineMatrix(a.angle(), translate[0], translate[1], scale, shear[0], shear[1]);
  return std::make_unique<AffineOp>("affine", input, std::move(warp), matrix, std::nullopt);
}

// Ranges with only the angle's set. Errors: INVALID_ARGUMENT when min > max.
absl::StatusOr<AffineRanges> DegreeRanges(float degrees_min, float degrees_max) {
  if (!(degrees_min <= degrees_max)) {
    return absl::InvalidArgumentError(absl::StrCat("degrees_min must be <= degrees_max, got ",
                                                   degrees_min, " and ", degrees_max));
  }
  AffineRanges ranges;
  ranges.degrees[0] = degrees_min;
  ranges.degrees[1] = degrees_max;
  return ranges;
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomRotationOp(const v1::Op& op,
                                                           const ImageShape& input) {
  const v1::RandomRotationOp& a = op.random_rotation();
  ASSIGN_OR_RETURN(WarpArgs warp, ParseWarpArgs(a.bilinear(), a.fill(), input));
  ASSIGN_OR_RETURN(AffineRanges ranges, DegreeRanges(a.degrees_min(), a.degrees_max()));
  ranges.rotation = true;
  return std::make_unique<AffineOp>("random_rotation", input, std::move(warp),
                                    std::array<double, 6>{}, ranges);
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomAffineOp(const v1::Op& op,
                                                         const ImageShape& input) {
  const v1::RandomAffineOp& a = op.random_affine();
  ASSIGN_OR_RETURN(WarpArgs warp, ParseWarpArgs(a.bilinear(), a.fill(), input));
  ASSIGN_OR_RETURN(AffineRanges r, DegreeRanges(a.degrees_min(), a.degrees_max()));
  if (a.translate_size() != 0) {
    if (a.translate_size() != 2 || !(a.translate(0) >= 0 && a.translate(0) <= 1) ||
        !(a.translate(1) >= 0 && a.translate(1) <= 1)) {
      return absl::InvalidArgumentError("translate takes 2 fractions in [0, 1]");
    }
    r.translate[0] = a.translate(0);
    r.translate[1] = a.translate(1);
  }
  if (a.scale_min() != 0 || a.scale_max() != 0) {
    if (!(a.scale_min() > 0 && a.scale_min() <= a.scale_max())) {
      return absl::InvalidArgumentError("scale_min and scale_max must satisfy 0 < min <= max");
    }
    r.scale[0] = a.scale_min();
    r.scale[1] = a.scale_max();
  }
  if (a.shear_size() != 0 && a.shear_size() != 2 && a.shear_size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("shear takes 0, 2 or 4 values, got ", a.shear_size()));
  }
  r.shears = a.shear_size();
  for (int i = 0; i < a.shear_size(); ++i) r.shear[i] = a.shear(i);
  return std::make_unique<AffineOp>("random_affine", input, std::move(warp),
                                    std::array<double, 6>{}, r);
}

// The schema's args followed by the warp's (bilinear, fill), shared by the three ops.
std::vector<ArgSchema> WithWarpArgs(std::vector<ArgSchema> args) {
  args.push_back({"bilinear", ArgType::kInt, "0", "0 nearest, 1 bilinear.", Closed(0, 1)});
  args.push_back({"fill", ArgType::kFloatList, "[]", "Empty (zeros), 1 value or one per channel."});
  return args;
}

}  // namespace

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

OpSchema AffineOpSchema() {
  return OpSchema{
      "affine",
      v1::Op::kAffine,
      "torchvision F.affine on tensors: rotation by angle (degrees, counter-clockwise), "
      "translation in pixels, scale and shear (degrees) about the centre; same size out; "
      "nearest (default, as torchvision) or bilinear=1; outside pixels are fill (blended by "
      "coverage when bilinear) or 0 when fill is empty.",
      WithWarpArgs({{"angle", ArgType::kFloat, "0", "Degrees."},
                    {"translate", ArgType::kFloatList, "[]", "(x, y) pixels."},
                    {"scale", ArgType::kFloat, "1", "> 0.", Above(0)},
                    {"shear", ArgType::kFloatList, "[]", "(x, y) degrees; one value is x."}}),
      &CreateAffineOp,
      {"`F.affine` on tensors (`F.rotate(a)` is `affine(angle=-a)`)", "uint8, float32",
       "uint8 ≤ 1, float ≤ 1e-4"},
      TargetSupport::kMoves,
      RngDraws::kNever};
}

OpSchema RandomAffineOpSchema() {
  return OpSchema{
      "random_affine",
      v1::Op::kRandomAffine,
      "torchvision RandomAffine on tensors: angle from [degrees_min, degrees_max]; translation "
      "up to translate = [fx, fy] of the width and height (rounded to pixels); scale from "
      "[scale_min, scale_max]; shear x from [shear0, shear1] (and y from [shear2, shear3]); "
      "then as affine.",
      WithWarpArgs(
          {{"degrees_min", ArgType::kFloat, "0", "Smallest angle, degrees."},
           {"degrees_max", ArgType::kFloat, "0", "Largest angle, degrees."},
           {"translate", ArgType::kFloatList, "[]", "Empty (none) or [fx, fy] in [0, 1]."},
           {"scale_min", ArgType::kFloat, "0", "0: no scaling; else > 0."},
           {"scale_max", ArgType::kFloat, "0", ">= scale_min."},
           {"shear", ArgType::kFloatList, "[]", "Empty, [x0, x1] or [x0, x1, y0, y1] degrees."}}),
      &CreateRandomAffineOp,
      {"`RandomAffine` (centre) on tensors", "uint8, float32",
       "fixed ranges: equal to torchvision within 1 level; the six parameters: KS against "
       "`get_params`"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

OpSchema RandomRotationOpSchema() {
  return OpSchema{
      "random_rotation",
      v1::Op::kRandomRotation,
      "torchvision RandomRotation on tensors (expand=False, centre): an angle drawn from "
      "[degrees_min, degrees_max] per sample, then as affine.",
      WithWarpArgs({{"degrees_min", ArgType::kFloat, "", "Smallest angle, degrees."},
                    {"degrees_max", ArgType::kFloat, "", "Largest angle, degrees."}}),
      &CreateRandomRotationOp,
      {"`RandomRotation` (expand=False, centre) on tensors", "uint8, float32",
       "as affine; angle: KS against uniform"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

}  // namespace stoker
