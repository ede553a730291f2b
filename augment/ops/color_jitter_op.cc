// color_jitter: torchvision's ColorJitter(brightness, contrast, saturation, hue).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "augment/kernels/color.h"
#include "augment/op_params.h"
#include "augment/ops/nested.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

using AdjustFn = void (*)(const ImageView&, float, const ImageView&);
constexpr AdjustFn kAdjust[4] = {&AdjustBrightness, &AdjustContrast, &AdjustSaturation, &AdjustHue};
constexpr const char* kArgNames[4] = {"brightness", "contrast", "saturation", "hue"};

class ColorJitterOp final : public Op, public DrawsParams {
 public:
  // REQUIRES: jitter[i] >= 0, jitter[3] (hue) <= 0.5; input has 1 or 3 channels.
  ColorJitterOp(const ImageShape& input, const float (&jitter)[4])
      : Op("color_jitter", input, input), adjustments_(jitter[3] > 0 ? 4 : 3) {
    std::copy(jitter, jitter + 4, jitter_);
  }

  bool SupportsInPlace() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    int order[4];
    float factor[4];
    Draw(rng, order, factor);
    ImageView current = in;
    bool written = false;
    for (int k = 0; k < adjustments_; ++k) {
      const int adjustment = order[k];
      if (jitter_[adjustment] == 0) continue;
      kAdjust[adjustment](current, factor[adjustment], out);
      current = out;
      written = true;
    }
    if (!written && in.data != out.data) std::memcpy(out.data, in.data, in.shape.bytes());
    return absl::OkStatus();
  }

  // [order (3 or 4 indices: 0 brightness, 1 contrast, 2 saturation, 3 hue), brightness,
  // contrast and saturation factors (, hue factor)].
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    int order[4];
    float factor[4];
    Draw(rng, order, factor);
    std::vector<double> params(order, order + adjustments_);
    params.insert(params.end(), factor, factor + adjustments_);
    return params;
  }

 private:
  // Draws (op.h): the order (a permutation of the adjustments, Fisher-Yates from the back:
  // UniformInt(n), ..., UniformInt(2), n = 3, or 4 with hue), then one factor per adjustment
  // in the order brightness, contrast, saturation, from [max(0, 1 - j), 1 + j], all drawn
  // even when j is 0, then with hue its factor from [-hue, hue].
  void Draw(CounterRng* rng, int (&order)[4], float (&factor)[4]) const {
    for (int i = 0; i < 4; ++i) order[i] = i;
    ShuffleFromBack(order, adjustments_, rng);
    for (int i = 0; i < 3; ++i) {
      factor[i] = rng->UniformFloat(std::max(0.0f, 1.0f - jitter_[i]), 1.0f + jitter_[i]);
    }
    factor[3] = adjustments_ == 4 ? rng->UniformFloat(-jitter_[3], jitter_[3]) : 0.0f;
  }

  const int adjustments_;  // 3, or 4 with hue (so pipelines without hue keep their draws)
  float jitter_[4];
};

absl::StatusOr<std::unique_ptr<Op>> CreateColorJitterOp(const stoker::v1::Op& op,
                                                        const ImageShape& input) {
  const stoker::v1::ColorJitterOp& args = op.color_jitter();
  const float jitter[4] = {args.brightness(), args.contrast(), args.saturation(), args.hue()};
  if (!(jitter[3] <= 0.5f)) {
    return absl::InvalidArgumentError(absl::StrCat("hue must be in [0, 0.5], got ", jitter[3]));
  }
  for (int i = 0; i < 4; ++i) {
    if (!(jitter[i] >= 0) || !std::isfinite(jitter[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(kArgNames[i], " must be >= 0, got ", jitter[i]));
    }
  }
  if (input.channels != 1 && input.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("requires 1 or 3 channels, got ", input.channels));
  }
  return std::make_unique<ColorJitterOp>(input, jitter);
}

}  // namespace

OpSchema ColorJitterOpSchema() {
  return OpSchema{
      "color_jitter",
      stoker::v1::Op::kColorJitter,
      "torchvision ColorJitter: brightness, contrast and saturation factors drawn from "
      "[max(0, 1 - x), 1 + x] and a hue shift from [-hue, hue], applied in a random order (0 "
      "disables one). Hue follows torchvision's tensor path (HSV in float32). uint8 or float32, "
      "1 or 3 channels.",
      {
          {"brightness", ArgType::kFloat, "0", "Brightness jitter, >= 0.", AtLeast(0)},
          {"contrast", ArgType::kFloat, "0", "Contrast jitter, >= 0.", AtLeast(0)},
          {"saturation", ArgType::kFloat, "0", "Saturation jitter, >= 0.", AtLeast(0)},
          {"hue", ArgType::kFloat, "0", "Hue jitter in [0, 0.5].", Closed(0, 0.5)},
      },
      &CreateColorJitterOp,
      {"`ColorJitter`", "uint8, float32",
       "order: χ² over the 24 permutations; factors: KS against uniform"},
      TargetSupport::kUnchanged,
      RngDraws::kAlways};
}

}  // namespace stoker
