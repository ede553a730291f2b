// color_jitter: torchvision's ColorJitter(brightness, contrast, saturation), hue excluded.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "augment/kernels/color.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

using AdjustFn = void (*)(const ImageView&, float, const ImageView&);
constexpr AdjustFn kAdjust[3] = {&AdjustBrightness, &AdjustContrast, &AdjustSaturation};
constexpr const char* kArgNames[3] = {"brightness", "contrast", "saturation"};

class ColorJitterOp final : public Op {
 public:
  // REQUIRES: jitter[i] >= 0; input has 1 or 3 channels.
  ColorJitterOp(const ImageShape& input, const float (&jitter)[3])
      : Op("color_jitter", input, input) {
    std::copy(jitter, jitter + 3, jitter_);
  }

  bool SupportsInPlace() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    // Draws (op.h): the order (a permutation of the three adjustments, Fisher-Yates from the
    // back: UniformInt(3), then UniformInt(2)), then one factor per adjustment in the order
    // brightness, contrast, saturation, from [max(0, 1 - j), 1 + j], all drawn even when j is 0.
    int order[3] = {0, 1, 2};
    for (int i = 2; i > 0; --i) {
      std::swap(order[i], order[rng->UniformInt(static_cast<uint64_t>(i) + 1)]);
    }
    float factor[3];
    for (int i = 0; i < 3; ++i) {
      factor[i] = rng->UniformFloat(std::max(0.0f, 1.0f - jitter_[i]), 1.0f + jitter_[i]);
    }
    ImageView current = in;
    bool written = false;
    for (const int adjustment : order) {
      if (jitter_[adjustment] == 0) continue;
      kAdjust[adjustment](current, factor[adjustment], out);
      current = out;
      written = true;
    }
    if (!written && in.data != out.data) std::memcpy(out.data, in.data, in.shape.bytes());
    return absl::OkStatus();
  }

 private:
  float jitter_[3];
};

absl::StatusOr<std::unique_ptr<Op>> CreateColorJitterOp(const stoker::v1::Op& op,
                                                        const ImageShape& input) {
  const stoker::v1::ColorJitterOp& args = op.color_jitter();
  const float jitter[3] = {args.brightness(), args.contrast(), args.saturation()};
  for (int i = 0; i < 3; ++i) {
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
      "torchvision ColorJitter without hue: brightness, contrast and saturation factors drawn "
      "from [max(0, 1 - x), 1 + x] and applied in a random order (0 disables one). uint8 or "
      "float32, 1 or 3 channels.",
      {
          {"brightness", ArgType::kFloat, "0", "Brightness jitter, >= 0."},
          {"contrast", ArgType::kFloat, "0", "Contrast jitter, >= 0."},
          {"saturation", ArgType::kFloat, "0", "Saturation jitter, >= 0."},
      },
      &CreateColorJitterOp};
}

}  // namespace stoker
