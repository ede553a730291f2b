// The ops that apply one kernel with probability p (torchvision's RandomHorizontalFlip,
// RandomVerticalFlip, RandomInvert, RandomPosterize, RandomSolarize, RandomAutocontrast):
// horizontal_flip, vertical_flip, invert, posterize, solarize, autocontrast. p = 1 gives the deterministic functional
// (torchvision.transforms.functional.vflip, invert, ...).

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "augment/kernels/geometry.h"
#include "augment/kernels/tone.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr float kDefaultProbability = 0.5f;

using Kernel = std::function<void(const ImageView& in, const ImageView& out)>;

// One draw, whatever p is (op.h): the kernel when rng->UniformFloat() < p, else a copy.
class RandomApplyOp final : public Op {
 public:
  // REQUIRES: p in [0, 1]; `kernel` keeps the shape and works in place.
  RandomApplyOp(std::string name, const ImageShape& input, float p, Kernel kernel)
      : Op(std::move(name), input, input), p_(p), kernel_(std::move(kernel)) {}

  bool SupportsInPlace() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    if (rng->UniformFloat() < p_) {
      kernel_(in, out);
    } else if (in.data != out.data) {
      std::memcpy(out.data, in.data, in.shape.bytes());
    }
    return absl::OkStatus();
  }

 private:
  const float p_;
  const Kernel kernel_;
};

// p from an optional proto field: 0.5 when unset. Errors: INVALID_ARGUMENT outside [0, 1].
absl::StatusOr<float> Probability(bool has_p, float p) {
  if (!has_p) return kDefaultProbability;
  if (!(p >= 0.0f && p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", p));
  }
  return p;
}

absl::StatusOr<std::unique_ptr<Op>> MakeOp(const char* name, const ImageShape& input,
                                           absl::StatusOr<float> p, Kernel kernel) {
  if (!p.ok()) return p.status();
  return std::make_unique<RandomApplyOp>(name, input, *p, std::move(kernel));
}

absl::StatusOr<std::unique_ptr<Op>> CreateHorizontalFlipOp(const v1::Op& op,
                                                           const ImageShape& input) {
  const v1::HorizontalFlipOp& args = op.horizontal_flip();
  return MakeOp("horizontal_flip", input, Probability(args.has_p(), args.p()), HorizontalFlip);
}

absl::StatusOr<std::unique_ptr<Op>> CreateVerticalFlipOp(const v1::Op& op,
                                                         const ImageShape& input) {
  const v1::VerticalFlipOp& args = op.vertical_flip();
  return MakeOp("vertical_flip", input, Probability(args.has_p(), args.p()), VerticalFlip);
}

absl::StatusOr<std::unique_ptr<Op>> CreateInvertOp(const v1::Op& op, const ImageShape& input) {
  const v1::InvertOp& args = op.invert();
  return MakeOp("invert", input, Probability(args.has_p(), args.p()), Invert);
}

absl::StatusOr<std::unique_ptr<Op>> CreatePosterizeOp(const v1::Op& op,
                                                      const ImageShape& input) {
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
    return absl::InvalidArgumentError(absl::StrCat("threshold must be in [0, ", bound,
                                                   "] for ", PixelTypeName(input.type),
                                                   " input, got ", threshold));
  }
  return MakeOp("solarize", input, Probability(args.has_p(), args.p()),
                [threshold](const ImageView& in, const ImageView& out) {
                  Solarize(in, threshold, out);
                });
}

absl::StatusOr<std::unique_ptr<Op>> CreateAutocontrastOp(const v1::Op& op,
                                                         const ImageShape& input) {
  const v1::AutocontrastOp& args = op.autocontrast();
  return MakeOp("autocontrast", input, Probability(args.has_p(), args.p()), Autocontrast);
}

ArgSchema ProbabilityArg() {
  return {"p", ArgType::kFloat, "0.5", "Probability in [0, 1] (1: always, the functional)."};
}

}  // namespace

OpSchema HorizontalFlipOpSchema() {
  return OpSchema{"horizontal_flip", v1::Op::kHorizontalFlip,
                  "torchvision RandomHorizontalFlip: mirrors the image left-right with "
                  "probability p. Any pixel type.",
                  {ProbabilityArg()}, &CreateHorizontalFlipOp};
}

OpSchema VerticalFlipOpSchema() {
  return OpSchema{"vertical_flip", v1::Op::kVerticalFlip,
                  "torchvision RandomVerticalFlip: mirrors the image top-bottom with "
                  "probability p. Any pixel type.",
                  {ProbabilityArg()}, &CreateVerticalFlipOp};
}

OpSchema InvertOpSchema() {
  return OpSchema{"invert", v1::Op::kInvert,
                  "torchvision RandomInvert: 255 - x (uint8) or 1 - x (float32) with "
                  "probability p.",
                  {ProbabilityArg()}, &CreateInvertOp};
}

OpSchema PosterizeOpSchema() {
  return OpSchema{"posterize", v1::Op::kPosterize,
                  "torchvision RandomPosterize: keeps the top `bits` bits of each value with "
                  "probability p. uint8 only (as torchvision).",
                  {{"bits", ArgType::kInt, "", "Bits kept, 0..8."}, ProbabilityArg()},
                  &CreatePosterizeOp};
}

OpSchema SolarizeOpSchema() {
  return OpSchema{"solarize", v1::Op::kSolarize,
                  "torchvision RandomSolarize: inverts every value >= threshold with "
                  "probability p.",
                  {{"threshold", ArgType::kFloat, "",
                    "In the image's range: 0..255 (uint8), 0..1 (float32)."},
                   ProbabilityArg()},
                  &CreateSolarizeOp};
}

OpSchema AutocontrastOpSchema() {
  return OpSchema{"autocontrast", v1::Op::kAutocontrast,
                  "torchvision RandomAutocontrast: stretches each channel from its [min, max] "
                  "to the full range (uint8 truncated, as torchvision) with probability p; a "
                  "constant channel is left as it is.",
                  {ProbabilityArg()}, &CreateAutocontrastOp};
}

}  // namespace stoker
