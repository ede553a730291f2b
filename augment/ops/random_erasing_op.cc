// random_erasing: torchvision RandomErasing(p, scale, ratio, value): with probability p, a
// rectangle of area fraction in [scale_min, scale_max] and aspect ratio (log-uniform) in
// [ratio_min, ratio_max], up to 10 tries, is overwritten with `value` (per channel) or, with
// value_random=1, standard normal noise per pixel (torchvision's value="random").

#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "augment/kernels/erase.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

struct EraseArgs {
  float p = 0.5f;
  float scale_min = 0.02f, scale_max = 0.33f;
  float log_ratio_min = 0, log_ratio_max = 0;
  std::vector<float> value;  // One per channel.
  bool random = false;
};

class RandomErasingOp final : public Op, public DrawsParams {
 public:
  RandomErasingOp(const ImageShape& input, EraseArgs args)
      : Op("random_erasing", input, input), args_(std::move(args)) {}

  bool SupportsInPlace() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    if (in.data != out.data) std::memcpy(out.data, in.data, in.shape.bytes());
    PixelRect rect;
    // Not applied, or no fitting rectangle in 10 tries: unchanged, as torchvision.
    if (!Draw(in.shape, rng, &rect)) return absl::OkStatus();
    if (!args_.random) {
      EraseRect(out, rect, args_.value.data(), /*per_pixel=*/false);
      return absl::OkStatus();
    }
    scratch->Reshape(ImageShape{rect.height, rect.width, in.shape.channels, PixelType::kFloat32});
    FillNormal(rng, scratch->view());
    EraseRect(out, rect, scratch->view().pixels<const float>(), /*per_pixel=*/true);
    return absl::OkStatus();
  }

  // [0] when nothing is erased, else [1, top, left, height, width] (the noise values are not
  // drawn here).
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    PixelRect r;
    if (!Draw(in, rng, &r)) return {0.0};
    return {1.0, static_cast<double>(r.top), static_cast<double>(r.left),
            static_cast<double>(r.height), static_cast<double>(r.width)};
  }

 private:
  // The draws of op.h up to the rectangle; false when not applied or nothing fits.
  bool Draw(const ImageShape& shape, CounterRng* rng, PixelRect* rect) const {
    if (rng->UniformFloat() >= args_.p) return false;
    const double area = static_cast<double>(shape.height) * shape.width;
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double erase_area = area * rng->UniformFloat(args_.scale_min, args_.scale_max);
      const double aspect = std::exp(rng->UniformFloat(args_.log_ratio_min, args_.log_ratio_max));
      // Python's round: half to even, as std::nearbyint in the default rounding mode.
      const double h = std::nearbyint(std::sqrt(erase_area * aspect));
      const double w = std::nearbyint(std::sqrt(erase_area / aspect));
      if (!(h < shape.height && w < shape.width)) continue;
      *rect = PixelRect{
          static_cast<uint32_t>(rng->UniformInt(shape.height - static_cast<uint64_t>(h) + 1)),
          static_cast<uint32_t>(rng->UniformInt(shape.width - static_cast<uint64_t>(w) + 1)),
          static_cast<uint32_t>(h), static_cast<uint32_t>(w)};
      return true;
    }
    return false;
  }

  // Standard normal values (Box-Muller on two UniformFloat draws per pair, op.h).
  static void FillNormal(CounterRng* rng, const ImageView& values) {
    float* v = values.pixels<float>();
    const size_t n = values.shape.elements();
    for (size_t i = 0; i < n; i += 2) {
      const double u1 = 1.0 - rng->UniformFloat();  // (0, 1]
      const double u2 = rng->UniformFloat();
      const double radius = std::sqrt(-2.0 * std::log(u1));
      v[i] = static_cast<float>(radius * std::cos(2 * M_PI * u2));
      if (i + 1 < n) v[i + 1] = static_cast<float>(radius * std::sin(2 * M_PI * u2));
    }
  }

  const EraseArgs args_;
};

absl::Status CheckRangeArgs(const char* name, float lo, float hi, float max) {
  if (!(lo > 0 && lo <= hi && hi <= max)) {
    return absl::InvalidArgumentError(absl::StrCat(name, "_min and ", name,
                                                   "_max must satisfy 0 < min <= max <= ", max,
                                                   ", got ", lo, " and ", hi));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomErasingOp(const v1::Op& op,
                                                          const ImageShape& input) {
  const v1::RandomErasingOp& a = op.random_erasing();
  EraseArgs args;
  args.p = a.has_p() ? a.p() : 0.5f;
  if (!(args.p >= 0.0f && args.p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", args.p));
  }
  args.scale_min = a.scale_min() == 0 ? 0.02f : a.scale_min();
  args.scale_max = a.scale_max() == 0 ? 0.33f : a.scale_max();
  const float ratio_min = a.ratio_min() == 0 ? 0.3f : a.ratio_min();
  const float ratio_max = a.ratio_max() == 0 ? 3.3f : a.ratio_max();
  RETURN_IF_ERROR(CheckRangeArgs("scale", args.scale_min, args.scale_max, 1.0f));
  RETURN_IF_ERROR(CheckRangeArgs("ratio", ratio_min, ratio_max, 1e6f));
  args.log_ratio_min = std::log(ratio_min);
  args.log_ratio_max = std::log(ratio_max);
  ASSIGN_OR_RETURN(args.value, PerChannelValues("value", a.value(), input.channels));
  if (args.value.empty()) args.value.assign(input.channels, 0.0f);
  if (a.value_random() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("value_random must be 0 or 1, got ", a.value_random()));
  }
  args.random = a.value_random() == 1;
  if (args.random) {
    RETURN_IF_ERROR(RequirePixelType(input, PixelType::kFloat32, " (normal noise is float)"));
  }
  return std::make_unique<RandomErasingOp>(input, std::move(args));
}

}  // namespace

OpSchema RandomErasingOpSchema() {
  return OpSchema{
      "random_erasing",
      v1::Op::kRandomErasing,
      "torchvision RandomErasing: with probability p, up to 10 tries of a rectangle with area "
      "fraction in [scale_min, scale_max] and log-uniform aspect ratio in [ratio_min, "
      "ratio_max] that fits; it is overwritten with value (per channel) or, with "
      "value_random=1, standard normal noise (float32). uint8 values are rounded.",
      {{"p", ArgType::kFloat, "0.5", "Probability in [0, 1].", Closed(0, 1)},
       {"scale_min", ArgType::kFloat, "0.02", "Smallest area fraction, > 0."},
       {"scale_max", ArgType::kFloat, "0.33", "Largest area fraction, <= 1."},
       {"ratio_min", ArgType::kFloat, "0.3", "Smallest aspect ratio (h/w), > 0."},
       {"ratio_max", ArgType::kFloat, "3.3", "Largest aspect ratio."},
       {"value", ArgType::kFloatList, "[0]", "Fill: 1 value or one per channel."},
       {"value_random", ArgType::kInt, "0", "1: standard normal noise per pixel instead.",
        Closed(0, 1)}},
      &CreateRandomErasingOp,
      {"`RandomErasing` (`value=\"random\"` is `value_random=1`)", "uint8, float32",
       "given its rectangle: exact (`F.erase`); erased fraction χ², rectangle KS against "
       "`get_params`"},
      TargetSupport::kUnchanged,
      RngDraws::kAlways};
}

}  // namespace stoker
