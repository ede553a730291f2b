// The ops that apply one kernel with probability p (torchvision's RandomHorizontalFlip,
// RandomVerticalFlip, RandomInvert, RandomPosterize, RandomSolarize, RandomAutocontrast,
// RandomGrayscale, RandomEqualize, RandomAdjustSharpness): horizontal_flip, vertical_flip,
// invert, posterize, solarize, autocontrast, random_grayscale, equalize, adjust_sharpness. p = 1
// gives the deterministic functional (torchvision.transforms.functional.vflip, invert, ...).

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "augment/kernels/color.h"
#include "augment/kernels/geometry.h"
#include "augment/kernels/tone.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr float kDefaultProbability = 0.5f;
constexpr float kDefaultGrayscaleProbability = 0.1f;  // torchvision's RandomGrayscale

using Kernel = std::function<void(const ImageView& in, const ImageView& out)>;

// What the kernel does to targets: nothing (photometric), or a flip.
enum class Moves { kNone, kHorizontalFlip, kVerticalFlip };

// One draw, whatever p is (op.h): the kernel when rng->UniformFloat() < p, else a copy.
class RandomApplyOp final : public Op, public DrawsParams {
 public:
  // REQUIRES: p in [0, 1]; `kernel` keeps the shape, and works in place when `in_place`.
  RandomApplyOp(std::string name, const ImageShape& input, float p, Kernel kernel, bool in_place,
                Moves moves)
      : Op(std::move(name), input, input),
        p_(p),
        kernel_(std::move(kernel)),
        in_place_(in_place),
        moves_(moves) {}

  bool SupportsInPlace() const override { return in_place_; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    if (rng->UniformFloat() < p_) {
      kernel_(in, out);
    } else if (in.data != out.data) {
      std::memcpy(out.data, in.data, in.shape.bytes());
    }
    return absl::OkStatus();
  }

  // A flip when applied (the same draw as Apply).
  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    if (!(rng->UniformFloat() < p_) || moves_ == Moves::kNone) return;
    moves->push_back(FlipMove(moves_ == Moves::kHorizontalFlip, in.height, in.width));
  }

  // [u]: applied when u < p.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    return {rng->UniformFloat()};
  }

 private:
  const float p_;
  const Kernel kernel_;
  const bool in_place_;
  const Moves moves_;
};

// p from an optional proto field: `unset` (0.5 unless said) when unset. Errors:
// INVALID_ARGUMENT outside [0, 1].
absl::StatusOr<float> Probability(bool has_p, float p, float unset = kDefaultProbability) {
  if (!has_p) return unset;
  if (!(p >= 0.0f && p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", p));
  }
  return p;
}

absl::StatusOr<std::unique_ptr<Op>> MakeOp(const char* name, const ImageShape& input,
                                           absl::StatusOr<float> p, Kernel kernel,
                                           bool in_place = true, Moves moves = Moves::kNone) {
  if (!p.ok()) return p.status();
  return std::make_unique<RandomApplyOp>(name, input, *p, std::move(kernel), in_place, moves);
}

absl::StatusOr<std::unique_ptr<Op>> CreateHorizontalFlipOp(const v1::Op& op,
                                                           const ImageShape& input) {
  const v1::HorizontalFlipOp& args = op.horizontal_flip();
  return MakeOp("horizontal_flip", input, Probability(args.has_p(), args.p()), HorizontalFlip,
                /*in_place=*/true, Moves::kHorizontalFlip);
}

absl::StatusOr<std::unique_ptr<Op>> CreateVerticalFlipOp(const v1::Op& op,
                                                         const ImageShape& input) {
  const v1::VerticalFlipOp& args = op.vertical_flip();
  return MakeOp("vertical_flip", input, Probability(args.has_p(), args.p()), VerticalFlip,
                /*in_place=*/true, Moves::kVerticalFlip);
}

absl::StatusOr<std::unique_ptr<Op>> CreateInvertOp(const v1::Op& op, const ImageShape& input) {
  const v1::InvertOp& args = op.invert();
  return MakeOp("invert", input, Probability(args.has_p(), args.p()), Invert);
}

absl::StatusOr<std::unique_ptr<Op>> CreatePosterizeOp(const v1::Op& op, const ImageShape& input) {
  const v1::PosterizeOp& args = op.posterize();
  RETURN_IF_ERROR(RequirePixelType(input, PixelType::kUint8, " (torchvision posterizes uint8)"));
  const uint32_t bits = args.bits();
  if (bits > 8) return absl::InvalidArgumentError(absl::StrCat("bits must be <= 8, got ", bits));
  return MakeOp("posterize", input, Probability(args.has_p(), args.p()),
                [bits](const ImageView& in, const ImageView& out) { Posterize(in, bits, out); });
}

absl::StatusOr<std::unique_ptr<Op>> CreateSolarizeOp(const v1::Op& op, const ImageShape& input) {
  const v1::SolarizeOp& args = op.solarize();
  const float threshold = args.threshold();
  const float bound = input.type == PixelType::kUint8 ? 255.0f : 1.0f;
  if (!(threshold >= 0.0f && threshold <= bound)) {
    return absl::InvalidArgumentError(absl::StrCat("threshold must be in [0, ", bound, "] for ",
                                                   PixelTypeName(input.type), " input, got ",
                                                   threshold));
  }
  return MakeOp(
      "solarize", input, Probability(args.has_p(), args.p()),
      [threshold](const ImageView& in, const ImageView& out) { Solarize(in, threshold, out); });
}

absl::StatusOr<std::unique_ptr<Op>> CreateAutocontrastOp(const v1::Op& op,
                                                         const ImageShape& input) {
  const v1::AutocontrastOp& args = op.autocontrast();
  return MakeOp("autocontrast", input, Probability(args.has_p(), args.p()), Autocontrast);
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomGrayscaleOp(const v1::Op& op,
                                                            const ImageShape& input) {
  const v1::RandomGrayscaleOp& args = op.random_grayscale();
  if (input.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("requires 3-channel (RGB) input, got ", input.channels));
  }
  return MakeOp("random_grayscale", input,
                Probability(args.has_p(), args.p(), kDefaultGrayscaleProbability), Grayscale);
}

absl::StatusOr<std::unique_ptr<Op>> CreateEqualizeOp(const v1::Op& op, const ImageShape& input) {
  const v1::EqualizeOp& args = op.equalize();
  RETURN_IF_ERROR(RequirePixelType(input, PixelType::kUint8, " (torchvision equalizes uint8)"));
  return MakeOp("equalize", input, Probability(args.has_p(), args.p()), Equalize);
}

absl::StatusOr<std::unique_ptr<Op>> CreateAdjustSharpnessOp(const v1::Op& op,
                                                            const ImageShape& input) {
  const v1::AdjustSharpnessOp& args = op.adjust_sharpness();
  const float factor = args.sharpness_factor();
  if (!(factor >= 0.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("sharpness_factor must be >= 0, got ", factor));
  }
  return MakeOp(
      "adjust_sharpness", input, Probability(args.has_p(), args.p()),
      [factor](const ImageView& in, const ImageView& out) { AdjustSharpness(in, factor, out); },
      /*in_place=*/false);
}

absl::StatusOr<std::unique_ptr<Op>> CreateAdjustHueOp(const v1::Op& op, const ImageShape& input) {
  const float factor = op.adjust_hue().hue_factor();
  if (!(factor >= -0.5f && factor <= 0.5f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("hue_factor must be in [-0.5, 0.5], got ", factor));
  }
  if (input.channels != 1 && input.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("requires 1 or 3 channels, got ", input.channels));
  }
  return MakeOp("adjust_hue", input, 1.0f, [factor](const ImageView& in, const ImageView& out) {
    AdjustHue(in, factor, out);
  });
}

ArgSchema ProbabilityArg(const char* unset = "0.5") {
  return {"p", ArgType::kFloat, unset, "Probability in [0, 1] (1: always, the functional).",
          Closed(0, 1)};
}

}  // namespace

OpSchema HorizontalFlipOpSchema() {
  return OpSchema{"horizontal_flip",
                  v1::Op::kHorizontalFlip,
                  "torchvision RandomHorizontalFlip: mirrors the image left-right with "
                  "probability p. Any pixel type.",
                  {ProbabilityArg()},
                  &CreateHorizontalFlipOp,
                  {"`RandomHorizontalFlip` / `F.hflip`", "any", "exact; applied: χ²"},
                  TargetSupport::kMoves,
                  RngDraws::kAlways};
}

OpSchema VerticalFlipOpSchema() {
  return OpSchema{"vertical_flip",
                  v1::Op::kVerticalFlip,
                  "torchvision RandomVerticalFlip: mirrors the image top-bottom with "
                  "probability p. Any pixel type.",
                  {ProbabilityArg()},
                  &CreateVerticalFlipOp,
                  {"`RandomVerticalFlip` / `F.vflip`", "any", "exact"},
                  TargetSupport::kMoves,
                  RngDraws::kAlways};
}

OpSchema InvertOpSchema() {
  return OpSchema{"invert",
                  v1::Op::kInvert,
                  "torchvision RandomInvert: 255 - x (uint8) or 1 - x (float32) with "
                  "probability p.",
                  {ProbabilityArg()},
                  &CreateInvertOp,
                  {"`RandomInvert` / `F.invert`", "uint8, float32", "exact"},
                  TargetSupport::kUnchanged,
                  RngDraws::kAlways};
}

OpSchema PosterizeOpSchema() {
  return OpSchema{"posterize",
                  v1::Op::kPosterize,
                  "torchvision RandomPosterize: keeps the top `bits` bits of each value with "
                  "probability p. uint8 only (as torchvision).",
                  {{"bits", ArgType::kInt, "", "Bits kept, 0..8.", Closed(0, 8)}, ProbabilityArg()},
                  &CreatePosterizeOp,
                  {"`RandomPosterize` / `F.posterize`", "uint8", "exact"},
                  TargetSupport::kUnchanged,
                  RngDraws::kAlways};
}

OpSchema SolarizeOpSchema() {
  return OpSchema{
      "solarize",
      v1::Op::kSolarize,
      "torchvision RandomSolarize: inverts every value >= threshold with "
      "probability p.",
      {{"threshold", ArgType::kFloat, "", "In the image's range: 0..255 (uint8), 0..1 (float32)."},
       ProbabilityArg()},
      &CreateSolarizeOp,
      {"`RandomSolarize` / `F.solarize` (threshold in the image's range)", "uint8, float32",
       "exact"},
      TargetSupport::kUnchanged,
      RngDraws::kAlways};
}

OpSchema AutocontrastOpSchema() {
  return OpSchema{
      "autocontrast",
      v1::Op::kAutocontrast,
      "torchvision RandomAutocontrast: stretches each channel from its [min, max] "
      "to the full range (uint8 truncated, as torchvision) with probability p; a "
      "constant channel is left as it is.",
      {ProbabilityArg()},
      &CreateAutocontrastOp,
      {"`RandomAutocontrast` / `F.autocontrast`", "uint8, float32", "uint8 ≤ 1, float ≤ 1e-4"},
      TargetSupport::kUnchanged,
      RngDraws::kAlways};
}

OpSchema RandomGrayscaleOpSchema() {
  return OpSchema{"random_grayscale",
                  v1::Op::kRandomGrayscale,
                  "torchvision RandomGrayscale: RGB to gray as the grayscale op (0.2989 R + "
                  "0.587 G + 0.114 B, uint8 truncated), kept as 3 channels, with probability p.",
                  {ProbabilityArg("0.1")},
                  &CreateRandomGrayscaleOp,
                  {"`RandomGrayscale` / `F.rgb_to_grayscale(x, 3)`", "uint8, float32",
                   "uint8 ≤ 1 (PIL rounds), float ≤ 1e-4"},
                  TargetSupport::kUnchanged,
                  RngDraws::kAlways};
}

OpSchema EqualizeOpSchema() {
  return OpSchema{"equalize",
                  v1::Op::kEqualize,
                  "torchvision RandomEqualize: per-channel histogram equalization with "
                  "probability p. uint8 only (as torchvision).",
                  {ProbabilityArg()},
                  &CreateEqualizeOp,
                  {"`RandomEqualize` / `F.equalize`", "uint8", "exact"},
                  TargetSupport::kUnchanged,
                  RngDraws::kAlways};
}

OpSchema AdjustHueOpSchema() {
  return OpSchema{
      "adjust_hue",
      v1::Op::kAdjustHue,
      "torchvision F.adjust_hue: shifts the hue by hue_factor (HSV in float32, as "
      "torchvision's tensor path); gray is unchanged. color_jitter(hue=...) draws "
      "the factor per sample.",
      {{"hue_factor", ArgType::kFloat, "", "In [-0.5, 0.5].", Closed(-0.5, 0.5)}},
      &CreateAdjustHueOp,
      {"`F.adjust_hue` (tensor path: HSV in float32)", "uint8, float32", "uint8 ≤ 1, float ≤ 1e-4"},
      TargetSupport::kUnchanged,
      RngDraws::kAlways};
}

OpSchema AdjustSharpnessOpSchema() {
  return OpSchema{
      "adjust_sharpness",
      v1::Op::kAdjustSharpness,
      "torchvision RandomAdjustSharpness: blends with a 3x3-smoothed copy, "
      "factor * x + (1 - factor) * smooth, with probability p.",
      {{"sharpness_factor", ArgType::kFloat, "", "Factor >= 0 (1: unchanged).", AtLeast(0)},
       ProbabilityArg()},
      &CreateAdjustSharpnessOp,
      {"`RandomAdjustSharpness` / `F.adjust_sharpness`", "uint8, float32",
       "uint8 ≤ 1, float ≤ 1e-4"},
      TargetSupport::kUnchanged,
      RngDraws::kAlways};
}

}  // namespace stoker
