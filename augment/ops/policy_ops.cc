// The automatic augmentation policies, torchvision's (transforms/autoaugment.py) on uint8
// tensors: rand_augment (RandAugment), trivial_augment_wide (TrivialAugmentWide), auto_augment
// (AutoAugment, ImageNet policy) and aug_mix (AugMix). Each draws which operations at which
// magnitudes (tables in policy_space.h) and runs them through the ApplyPolicyOp kernel.

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "augment/kernels/policy.h"
#include "augment/op_params.h"
#include "augment/ops/nested.h"
#include "augment/ops/ops.h"
#include "augment/ops/policy_space.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr int kMaxNumOps = 100;
constexpr int kAutoAugmentBins = 10;  // AutoAugment's and AugMix's _augmentation_space(10, ...)
constexpr int kMaxMixtureWidth = 32;
constexpr int kMaxChainDepth = 100;

// Base of the four: uint8 with 1 or 3 channels (torchvision's policies on tensors), the warp
// arguments, and the parameter hook. Not in place (the kernels warp into a new image).
class PolicyOpBase : public Op, public DrawsParams {
 protected:
  PolicyOpBase(std::string name, const ImageShape& input, WarpArgs warp)
      : Op(std::move(name), input, input), warp_(std::move(warp)) {}

  // Applies `step` (an operation of `space`) from `in` to `out`.
  absl::Status ApplyStep(absl::Span<const PolicyOpSpec> space, const PolicyStep& step,
                         const ImageView& in, const ImageView& out) const {
    ApplyPolicyOp(space[step.index].op, step.magnitude, warp_.bilinear,
                  warp_.fill.empty() ? nullptr : warp_.fill.data(), in, out);
    return absl::OkStatus();
  }

  // Appends (index, bin, magnitude).
  static void Append(const PolicyStep& step, std::vector<double>* params) {
    params->insert(params->end(), {static_cast<double>(step.index), static_cast<double>(step.bin),
                                   step.magnitude});
  }

 private:
  const WarpArgs warp_;
};

// A step of a table of `bins` magnitude bins: the operation uniformly (rng->UniformInt(table
// size)), then its bin (a fixed one, or rng->UniformInt(bin_bound) when `fixed_bin` < 0; none
// for a single-magnitude operation), then the sign (SignedMagnitude).
PolicyStep DrawTableStep(absl::Span<const PolicyOpSpec> space, int fixed_bin, int bin_bound,
                         int bins, const ImageShape& shape, CounterRng* rng) {
  PolicyStep step;
  step.index = static_cast<int>(rng->UniformInt(space.size()));
  const PolicyOpSpec& spec = space[step.index];
  if (spec.scale != PolicyOpSpec::Scale::kNone) {
    step.bin = fixed_bin >= 0 ? fixed_bin : static_cast<int>(rng->UniformInt(bin_bound));
  }
  step.magnitude = SignedMagnitude(spec, step.bin, bins, shape.height, shape.width, rng);
  return step;
}

// rand_augment (num_ops steps at a fixed bin) and trivial_augment_wide (one step, bin drawn).
class TableAugmentOp final : public PolicyOpBase {
 public:
  TableAugmentOp(std::string name, const ImageShape& input, WarpArgs warp,
                 absl::Span<const PolicyOpSpec> space, int num_ops, int fixed_bin, int bins)
      : PolicyOpBase(std::move(name), input, std::move(warp)),
        space_(space),
        num_ops_(num_ops),
        fixed_bin_(fixed_bin),
        bins_(bins) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    return RunSteps(num_ops_, in, out, [&](int, const ImageView& from, const ImageView& to) {
      return ApplyStep(space_, DrawTableStep(space_, fixed_bin_, bins_, bins_, in.shape, rng), from,
                       to);
    });
  }

  // (index, bin, magnitude) per step.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    std::vector<double> params;
    for (int i = 0; i < num_ops_; ++i) {
      Append(DrawTableStep(space_, fixed_bin_, bins_, bins_, in, rng), &params);
    }
    return params;
  }

 private:
  const absl::Span<const PolicyOpSpec> space_;
  const int num_ops_;
  const int fixed_bin_;  // < 0: drawn per step
  const int bins_;
};

// auto_augment: AutoAugment.get_params (sub-policy, two probabilities, two signs), then the
// sub-policy's operations whose probability is <= their p.
class AutoAugmentOp final : public PolicyOpBase {
 public:
  AutoAugmentOp(const ImageShape& input, WarpArgs warp)
      : PolicyOpBase("auto_augment", input, std::move(warp)) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    const Draw draw = DrawPolicy(rng);
    std::array<PolicyStep, 2> steps;
    std::array<const PolicyOpSpec*, 2> specs;
    int count = 0;
    for (int i = 0; i < 2; ++i) {
      const SubPolicyStep& s = ImageNetPolicy()[draw.policy][i];
      if (!(draw.probs[i] <= s.p)) continue;
      specs[count] = &AutoAugmentSpec(s.op);
      steps[count].magnitude = s.bin < 0 ? 0.0
                                         : PolicyMagnitude(*specs[count], s.bin, kAutoAugmentBins,
                                                           in.shape.height, in.shape.width);
      if (specs[count]->is_signed && draw.signs[i] == 0) steps[count].magnitude *= -1.0;
      ++count;
    }
    return RunSteps(count, in, out, [&](int i, const ImageView& from, const ImageView& to) {
      return ApplyStep(absl::MakeConstSpan(specs[i], 1), steps[i], from, to);
    });
  }

  // (sub-policy index, probs[0], probs[1], signs[0], signs[1]) as get_params returns them.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    const Draw d = DrawPolicy(rng);
    return {static_cast<double>(d.policy), d.probs[0], d.probs[1], static_cast<double>(d.signs[0]),
            static_cast<double>(d.signs[1])};
  }

 private:
  struct Draw {
    int policy;
    float probs[2];
    int signs[2];
  };
  // rng->UniformInt(25), two UniformFloat, two UniformInt(2) (get_params' order).
  static Draw DrawPolicy(CounterRng* rng) {
    Draw d;
    d.policy = static_cast<int>(rng->UniformInt(ImageNetPolicy().size()));
    for (float& p : d.probs) p = rng->UniformFloat();
    for (int& s : d.signs) s = static_cast<int>(rng->UniformInt(2));
    return d;
  }
};

// aug_mix: m ~ Dirichlet(alpha, alpha), chain weights ~ Dirichlet(alpha × width) × m[1]; the
// result is m[0] × image + Σ weight_i × chain_i(image), truncated to uint8.
class AugMixOp final : public PolicyOpBase {
 public:
  struct Args {
    int severity = 3;
    int width = 3;
    int depth = -1;
    float alpha = 1.0f;
    bool all_ops = true;
  };
  AugMixOp(const ImageShape& input, WarpArgs warp, const Args& args)
      : PolicyOpBase("aug_mix", input, std::move(warp)),
        args_(args),
        space_(AugMixSpace(args.all_ops)) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    const Weights w = DrawWeights(rng);
    NestedScratch images;
    ImageBuffer& mix = images.image(2);
    ImageBuffer& chain = images.image(3);
    mix.Reshape(
        ImageShape{in.shape.height, in.shape.width, in.shape.channels, PixelType::kFloat32});
    chain.Reshape(in.shape);
    const size_t n = in.shape.elements();
    float* acc = mix.view().pixels<float>();
    const uint8_t* src = in.pixels<const uint8_t>();
    for (size_t i = 0; i < n; ++i) acc[i] = w.m[0] * static_cast<float>(src[i]);
    for (int c = 0; c < args_.width; ++c) {
      const float weight = w.dirichlet[c] * w.m[1];  // combined_weights, float32
      const int depth = DrawDepth(rng);
      RETURN_IF_ERROR(
          RunSteps(depth, in, chain.view(), [&](int, const ImageView& from, const ImageView& to) {
            return ApplyStep(space_, DrawStep(in.shape, rng), from, to);
          }));
      const uint8_t* aug = chain.view().pixels<const uint8_t>();
      for (size_t i = 0; i < n; ++i) acc[i] += weight * static_cast<float>(aug[i]);
    }
    uint8_t* dst = out.pixels<uint8_t>();
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(acc[i]);  // .to(uint8)
    return absl::OkStatus();
  }

  // m[0], m[1], the chains' Dirichlet sample (a chain's weight is it × m[1] in float32); then
  // per chain its depth and (index, bin, magnitude) per step.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    const Weights w = DrawWeights(rng);
    std::vector<double> params = {w.m[0], w.m[1]};
    params.insert(params.end(), w.dirichlet.begin(), w.dirichlet.begin() + args_.width);
    for (int c = 0; c < args_.width; ++c) {
      const int depth = DrawDepth(rng);
      params.push_back(depth);
      for (int s = 0; s < depth; ++s) Append(DrawStep(in, rng), &params);
    }
    return params;
  }

 private:
  struct Weights {
    float m[2];
    std::array<float, kMaxMixtureWidth> dirichlet;
  };
  // Two Gamma(alpha) for m, then `width` Gamma(alpha) for the chains (SampleGamma's draws),
  // each Dirichlet normalized in double and kept as float32 as torch's.
  Weights DrawWeights(CounterRng* rng) const {
    Weights w;
    const double g0 = SampleGamma(args_.alpha, rng), g1 = SampleGamma(args_.alpha, rng);
    w.m[0] = static_cast<float>(g0 / (g0 + g1));
    w.m[1] = static_cast<float>(g1 / (g0 + g1));
    std::array<double, kMaxMixtureWidth> g;
    double total = 0;
    for (int c = 0; c < args_.width; ++c) total += g[c] = SampleGamma(args_.alpha, rng);
    for (int c = 0; c < args_.width; ++c) w.dirichlet[c] = static_cast<float>(g[c] / total);
    return w;
  }
  // chain_depth, or 1 + rng->UniformInt(3) (torch.randint(1, 4)).
  int DrawDepth(CounterRng* rng) const {
    return args_.depth > 0 ? args_.depth : 1 + static_cast<int>(rng->UniformInt(3));
  }
  // The operation, then its bin from rng->UniformInt(severity) of 10, then the sign.
  PolicyStep DrawStep(const ImageShape& shape, CounterRng* rng) const {
    return DrawTableStep(space_, -1, args_.severity, kAutoAugmentBins, shape, rng);
  }

  const Args args_;
  const absl::Span<const PolicyOpSpec> space_;
};

// The checks every policy shares: uint8, 1 or 3 channels, the warp arguments.
absl::StatusOr<WarpArgs> PolicyInput(uint32_t bilinear,
                                     const google::protobuf::RepeatedField<float>& fill,
                                     const ImageShape& input) {
  RETURN_IF_ERROR(RequirePixelType(input, PixelType::kUint8,
                                   " (torchvision's policies take uint8 tensors: put it before "
                                   "to_float)"));
  if (input.channels != 1 && input.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("requires 1 or 3 channels (as torchvision), got ", input.channels));
  }
  return ParseWarpArgs(bilinear, fill, input);
}

// An optional integer field in [lo, hi], `unset` when unset.
absl::StatusOr<int> Bounded(const char* name, bool has, int64_t value, int unset, int lo, int hi) {
  if (!has) return unset;
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be in [", lo, ", ", hi, "], got ", value));
  }
  return static_cast<int>(value);
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandAugmentOp(const v1::Op& op, const ImageShape& input) {
  const v1::RandAugmentOp& a = op.rand_augment();
  ASSIGN_OR_RETURN(WarpArgs warp, PolicyInput(a.bilinear(), a.fill(), input));
  ASSIGN_OR_RETURN(int num_ops, Bounded("num_ops", a.has_num_ops(), a.num_ops(), 2, 0, kMaxNumOps));
  ASSIGN_OR_RETURN(int bins, Bounded("num_magnitude_bins", a.has_num_magnitude_bins(),
                                     a.num_magnitude_bins(), 31, 2, 1000));
  ASSIGN_OR_RETURN(int magnitude,
                   Bounded("magnitude", a.has_magnitude(), a.magnitude(), 9, 0, bins - 1));
  return std::make_unique<TableAugmentOp>("rand_augment", input, std::move(warp),
                                          RandAugmentSpace(), num_ops, magnitude, bins);
}

absl::StatusOr<std::unique_ptr<Op>> CreateTrivialAugmentWideOp(const v1::Op& op,
                                                               const ImageShape& input) {
  const v1::TrivialAugmentWideOp& a = op.trivial_augment_wide();
  ASSIGN_OR_RETURN(WarpArgs warp, PolicyInput(a.bilinear(), a.fill(), input));
  ASSIGN_OR_RETURN(int bins, Bounded("num_magnitude_bins", a.has_num_magnitude_bins(),
                                     a.num_magnitude_bins(), 31, 2, 1000));
  return std::make_unique<TableAugmentOp>("trivial_augment_wide", input, std::move(warp),
                                          TrivialAugmentWideSpace(), 1, -1, bins);
}

absl::StatusOr<std::unique_ptr<Op>> CreateAutoAugmentOp(const v1::Op& op, const ImageShape& input) {
  const v1::AutoAugmentOp& a = op.auto_augment();
  ASSIGN_OR_RETURN(WarpArgs warp, PolicyInput(a.bilinear(), a.fill(), input));
  if (a.policy() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy must be 0 (imagenet; cifar10 and svhn are not supported), got ", a.policy()));
  }
  return std::make_unique<AutoAugmentOp>(input, std::move(warp));
}

absl::StatusOr<std::unique_ptr<Op>> CreateAugMixOp(const v1::Op& op, const ImageShape& input) {
  const v1::AugMixOp& a = op.aug_mix();
  ASSIGN_OR_RETURN(WarpArgs warp,
                   PolicyInput(a.has_bilinear() ? a.bilinear() : 1, a.fill(), input));
  AugMixOp::Args args;
  ASSIGN_OR_RETURN(args.severity, Bounded("severity", a.has_severity(), a.severity(), 3, 1, 10));
  ASSIGN_OR_RETURN(args.width, Bounded("mixture_width", a.has_mixture_width(), a.mixture_width(), 3,
                                       1, kMaxMixtureWidth));
  ASSIGN_OR_RETURN(args.depth, Bounded("chain_depth", a.has_chain_depth(), a.chain_depth(), -1,
                                       -1000, kMaxChainDepth));
  ASSIGN_OR_RETURN(int all_ops, Bounded("all_ops", a.has_all_ops(), a.all_ops(), 1, 0, 1));
  args.all_ops = all_ops == 1;
  if (a.has_alpha()) {
    if (!(a.alpha() > 0.0f && a.alpha() <= 1e6f)) {
      return absl::InvalidArgumentError(absl::StrCat("alpha must be > 0, got ", a.alpha()));
    }
    args.alpha = a.alpha();
  }
  return std::make_unique<AugMixOp>(input, std::move(warp), args);
}

// bilinear and fill, as the warping ops' (affine_ops.cc).
std::vector<ArgSchema> WithPolicyWarpArgs(std::vector<ArgSchema> args,
                                          const char* bilinear_default = "0") {
  args.push_back({"bilinear", ArgType::kInt, bilinear_default,
                  "0 nearest, 1 bilinear, for the geometric operations.", Closed(0, 1)});
  args.push_back(
      {"fill", ArgType::kFloatList, "[]", "Empty (outside is 0), 1 value or one per channel."});
  return args;
}

}  // namespace

OpSchema RandAugmentOpSchema() {
  return OpSchema{
      "rand_augment",
      v1::Op::kRandAugment,
      "torchvision RandAugment on uint8 tensors (1 or 3 channels): num_ops operations, each "
      "drawn uniformly from torchvision's 14 (Identity, ShearX/Y, TranslateX/Y, Rotate, "
      "Brightness, Color, Contrast, Sharpness, Posterize, Solarize, AutoContrast, Equalize), at "
      "magnitude bin `magnitude` of num_magnitude_bins, signed ones negated with probability "
      "1/2.",
      WithPolicyWarpArgs(
          {{"num_ops", ArgType::kInt, "2", "Operations per image, 0..100.", Closed(0, kMaxNumOps)},
           {"magnitude", ArgType::kInt, "9", "Bin index, < num_magnitude_bins."},
           {"num_magnitude_bins", ArgType::kInt, "31", "Bins, >= 2.", Closed(2, 1000)}}),
      &CreateRandAugmentOp,
      {"`RandAugment` on uint8 tensors", "uint8, 1 or 3 channels",
       "given the drawn ops: each of the 14 operations uint8 ≤ 1 (chains: see below); op choice "
       "and sign: χ²"},
      TargetSupport::kRefused,
      RngDraws::kAlways};
}

OpSchema TrivialAugmentWideOpSchema() {
  return OpSchema{
      "trivial_augment_wide",
      v1::Op::kTrivialAugmentWide,
      "torchvision TrivialAugmentWide on uint8 tensors (1 or 3 channels): one operation of "
      "its 14 (wide magnitudes), at a magnitude bin drawn uniformly, signed ones negated with "
      "probability 1/2.",
      WithPolicyWarpArgs(
          {{"num_magnitude_bins", ArgType::kInt, "31", "Bins, >= 2.", Closed(2, 1000)}}),
      &CreateTrivialAugmentWideOp,
      {"`TrivialAugmentWide` on uint8 tensors", "uint8, 1 or 3 channels",
       "given the draws: ≤ 1; op and bin: χ²"},
      TargetSupport::kRefused,
      RngDraws::kAlways};
}

OpSchema AutoAugmentOpSchema() {
  return OpSchema{
      "auto_augment",
      v1::Op::kAutoAugment,
      "torchvision AutoAugment(AutoAugmentPolicy.IMAGENET) on uint8 tensors (1 or 3 channels): "
      "one of the 25 sub-policies uniformly, each of its two operations applied with its "
      "probability at its magnitude, signs random.",
      WithPolicyWarpArgs(
          {{"policy", ArgType::kInt, "0", "0: imagenet (the only one).", Closed(0, 0)}}),
      &CreateAutoAugmentOp,
      {"`AutoAugment(AutoAugmentPolicy.IMAGENET)` on uint8 tensors", "uint8, 1 or 3 channels",
       "given `get_params`' draws: ≤ 1; sub-policy: χ²"},
      TargetSupport::kRefused,
      RngDraws::kAlways};
}

OpSchema AugMixOpSchema() {
  return OpSchema{
      "aug_mix",
      v1::Op::kAugMix,
      "torchvision AugMix on uint8 tensors (1 or 3 channels): mixture_width chains of "
      "chain_depth (or 1..3 drawn) operations at severity-bounded magnitudes, mixed with "
      "Dirichlet(alpha) weights and blended with the image by Beta(alpha, alpha).",
      WithPolicyWarpArgs(
          {{"severity", ArgType::kInt, "3", "Magnitude bins drawn from, 1..10.", Closed(1, 10)},
           {"mixture_width", ArgType::kInt, "3", "Chains, 1..32.", Closed(1, kMaxMixtureWidth)},
           {"chain_depth", ArgType::kInt, "-1", "> 0: operations per chain; else 1..3 drawn."},
           {"alpha", ArgType::kFloat, "1", "Dirichlet / Beta concentration, > 0.",
            ArgRange{0, true, 1e6, false}},
           {"all_ops", ArgType::kInt, "1", "1: all 13 operations; 0: the 9 geometric/tone.",
            Closed(0, 1)}},
          "1"),
      &CreateAugMixOp,
      {"`AugMix` on uint8 tensors", "uint8, 1 or 3 channels",
       "given the weights and chains: ≤ 1; Beta weight: KS; chain depth, ops: χ²"},
      TargetSupport::kRefused,
      RngDraws::kAlways};
}

}  // namespace stoker
