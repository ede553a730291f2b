#include "augment/ops/policy_space.h"

#include <cmath>

namespace stoker {
namespace {

using Scale = PolicyOpSpec::Scale;
using P = PolicyOp;

// torch.linspace(start, end, steps)[i] in float32 (ATen's CPU kernel: from the start for the
// first half, from the end for the second).
float Linspace(float start, float end, int steps, int i) {
  const float step = (end - start) / static_cast<float>(steps - 1);
  if (i < steps / 2) return start + step * static_cast<float>(i);
  return end - step * static_cast<float>(steps - i - 1);
}

constexpr double kRandTranslate = 150.0 / 331.0;

// RandAugment's table; AutoAugment's is it without Identity, plus Invert.
constexpr PolicyOpSpec kRandAugment[] = {
    {P::kIdentity, false, Scale::kNone, 0, 0},
    {P::kShearX, true, Scale::kLinear, 0, 0.3},
    {P::kShearY, true, Scale::kLinear, 0, 0.3},
    {P::kTranslateX, true, Scale::kWidth, 0, kRandTranslate},
    {P::kTranslateY, true, Scale::kHeight, 0, kRandTranslate},
    {P::kRotate, true, Scale::kLinear, 0, 30},
    {P::kBrightness, true, Scale::kLinear, 0, 0.9},
    {P::kColor, true, Scale::kLinear, 0, 0.9},
    {P::kContrast, true, Scale::kLinear, 0, 0.9},
    {P::kSharpness, true, Scale::kLinear, 0, 0.9},
    {P::kPosterize, false, Scale::kPosterize, 8, 4},
    {P::kSolarize, false, Scale::kLinear, 255, 0},
    {P::kAutoContrast, false, Scale::kNone, 0, 0},
    {P::kEqualize, false, Scale::kNone, 0, 0},
};

constexpr PolicyOpSpec kAutoAugment[] = {
    {P::kShearX, true, Scale::kLinear, 0, 0.3},
    {P::kShearY, true, Scale::kLinear, 0, 0.3},
    {P::kTranslateX, true, Scale::kWidth, 0, kRandTranslate},
    {P::kTranslateY, true, Scale::kHeight, 0, kRandTranslate},
    {P::kRotate, true, Scale::kLinear, 0, 30},
    {P::kBrightness, true, Scale::kLinear, 0, 0.9},
    {P::kColor, true, Scale::kLinear, 0, 0.9},
    {P::kContrast, true, Scale::kLinear, 0, 0.9},
    {P::kSharpness, true, Scale::kLinear, 0, 0.9},
    {P::kPosterize, false, Scale::kPosterize, 8, 4},
    {P::kSolarize, false, Scale::kLinear, 255, 0},
    {P::kAutoContrast, false, Scale::kNone, 0, 0},
    {P::kEqualize, false, Scale::kNone, 0, 0},
    {P::kInvert, false, Scale::kNone, 0, 0},
};

constexpr PolicyOpSpec kTrivialAugmentWide[] = {
    {P::kIdentity, false, Scale::kNone, 0, 0},       {P::kShearX, true, Scale::kLinear, 0, 0.99},
    {P::kShearY, true, Scale::kLinear, 0, 0.99},     {P::kTranslateX, true, Scale::kLinear, 0, 32},
    {P::kTranslateY, true, Scale::kLinear, 0, 32},   {P::kRotate, true, Scale::kLinear, 0, 135},
    {P::kBrightness, true, Scale::kLinear, 0, 0.99}, {P::kColor, true, Scale::kLinear, 0, 0.99},
    {P::kContrast, true, Scale::kLinear, 0, 0.99},   {P::kSharpness, true, Scale::kLinear, 0, 0.99},
    {P::kPosterize, false, Scale::kPosterize, 8, 6}, {P::kSolarize, false, Scale::kLinear, 255, 0},
    {P::kAutoContrast, false, Scale::kNone, 0, 0},   {P::kEqualize, false, Scale::kNone, 0, 0},
};

// AugMix: the first 9 always, the last 4 with all_ops (dict.update appends them).
constexpr PolicyOpSpec kAugMix[] = {
    {P::kShearX, true, Scale::kLinear, 0, 0.3},
    {P::kShearY, true, Scale::kLinear, 0, 0.3},
    {P::kTranslateX, true, Scale::kWidth, 0, 1.0 / 3.0},
    {P::kTranslateY, true, Scale::kHeight, 0, 1.0 / 3.0},
    {P::kRotate, true, Scale::kLinear, 0, 30},
    {P::kPosterize, false, Scale::kPosterize, 4, 4},
    {P::kSolarize, false, Scale::kLinear, 255, 0},
    {P::kAutoContrast, false, Scale::kNone, 0, 0},
    {P::kEqualize, false, Scale::kNone, 0, 0},
    {P::kBrightness, true, Scale::kLinear, 0, 0.9},
    {P::kColor, true, Scale::kLinear, 0, 0.9},
    {P::kContrast, true, Scale::kLinear, 0, 0.9},
    {P::kSharpness, true, Scale::kLinear, 0, 0.9},
};
constexpr size_t kAugMixBasicOps = 9;

constexpr int kNone = -1;
constexpr SubPolicy kImageNet[] = {
    {{{P::kPosterize, 0.4f, 8}, {P::kRotate, 0.6f, 9}}},
    {{{P::kSolarize, 0.6f, 5}, {P::kAutoContrast, 0.6f, kNone}}},
    {{{P::kEqualize, 0.8f, kNone}, {P::kEqualize, 0.6f, kNone}}},
    {{{P::kPosterize, 0.6f, 7}, {P::kPosterize, 0.6f, 6}}},
    {{{P::kEqualize, 0.4f, kNone}, {P::kSolarize, 0.2f, 4}}},
    {{{P::kEqualize, 0.4f, kNone}, {P::kRotate, 0.8f, 8}}},
    {{{P::kSolarize, 0.6f, 3}, {P::kEqualize, 0.6f, kNone}}},
    {{{P::kPosterize, 0.8f, 5}, {P::kEqualize, 1.0f, kNone}}},
    {{{P::kRotate, 0.2f, 3}, {P::kSolarize, 0.6f, 8}}},
    {{{P::kEqualize, 0.6f, kNone}, {P::kPosterize, 0.4f, 6}}},
    {{{P::kRotate, 0.8f, 8}, {P::kColor, 0.4f, 0}}},
    {{{P::kRotate, 0.4f, 9}, {P::kEqualize, 0.6f, kNone}}},
    {{{P::kEqualize, 0.0f, kNone}, {P::kEqualize, 0.8f, kNone}}},
    {{{P::kInvert, 0.6f, kNone}, {P::kEqualize, 1.0f, kNone}}},
    {{{P::kColor, 0.6f, 4}, {P::kContrast, 1.0f, 8}}},
    {{{P::kRotate, 0.8f, 8}, {P::kColor, 1.0f, 2}}},
    {{{P::kColor, 0.8f, 8}, {P::kSolarize, 0.8f, 7}}},
    {{{P::kSharpness, 0.4f, 7}, {P::kInvert, 0.6f, kNone}}},
    {{{P::kShearX, 0.6f, 5}, {P::kEqualize, 1.0f, kNone}}},
    {{{P::kColor, 0.4f, 0}, {P::kEqualize, 0.6f, kNone}}},
    {{{P::kEqualize, 0.4f, kNone}, {P::kSolarize, 0.2f, 4}}},
    {{{P::kSolarize, 0.6f, 5}, {P::kAutoContrast, 0.6f, kNone}}},
    {{{P::kInvert, 0.6f, kNone}, {P::kEqualize, 1.0f, kNone}}},
    {{{P::kColor, 0.6f, 4}, {P::kContrast, 1.0f, 8}}},
    {{{P::kEqualize, 0.8f, kNone}, {P::kEqualize, 0.6f, kNone}}},
};

double StandardNormal(CounterRng* rng) {
  constexpr double kTwoPi = 6.28318530717958647692;
  const double u1 = 1.0 - rng->UniformDouble();  // (0, 1]
  const double u2 = rng->UniformDouble();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace

double PolicyMagnitude(const PolicyOpSpec& spec, int bin, int num_bins, uint32_t height,
                       uint32_t width) {
  switch (spec.scale) {
    case Scale::kNone:
      return 0.0;
    case Scale::kLinear:
      return Linspace(static_cast<float>(spec.start), static_cast<float>(spec.end), num_bins, bin);
    case Scale::kWidth:
      return Linspace(0.0f, static_cast<float>(spec.end * width), num_bins, bin);
    case Scale::kHeight:
      return Linspace(0.0f, static_cast<float>(spec.end * height), num_bins, bin);
    case Scale::kPosterize: {
      const float divisor = static_cast<float>((num_bins - 1) / spec.end);
      return spec.start - std::nearbyint(static_cast<float>(bin) / divisor);
    }
  }
  return 0.0;
}

absl::Span<const PolicyOpSpec> RandAugmentSpace() { return kRandAugment; }
absl::Span<const PolicyOpSpec> TrivialAugmentWideSpace() { return kTrivialAugmentWide; }
absl::Span<const PolicyOpSpec> AutoAugmentSpace() { return kAutoAugment; }
absl::Span<const PolicyOpSpec> AugMixSpace(bool all_ops) {
  return absl::MakeConstSpan(kAugMix, all_ops ? std::size(kAugMix) : kAugMixBasicOps);
}
absl::Span<const SubPolicy> ImageNetPolicy() { return kImageNet; }

const PolicyOpSpec& AutoAugmentSpec(PolicyOp op) {
  for (const PolicyOpSpec& spec : kAutoAugment) {
    if (spec.op == op) return spec;
  }
  return kAutoAugment[0];  // Unreachable for the ops of ImageNetPolicy.
}

double SignedMagnitude(const PolicyOpSpec& spec, int bin, int num_bins, uint32_t height,
                       uint32_t width, CounterRng* rng) {
  const double magnitude = PolicyMagnitude(spec, bin, num_bins, height, width);
  if (spec.is_signed && rng->UniformInt(2) == 1) return -magnitude;
  return magnitude;
}

double SampleGamma(double alpha, CounterRng* rng) {
  if (alpha < 1.0) {
    const double boost = std::pow(1.0 - rng->UniformDouble(), 1.0 / alpha);
    return SampleGamma(alpha + 1.0, rng) * boost;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x, v;
    do {
      x = StandardNormal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - rng->UniformDouble();  // (0, 1]
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

}  // namespace stoker
