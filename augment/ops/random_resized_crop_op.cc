// random_resized_crop: torchvision's RandomResizedCrop (get_params, then resize).

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "augment/kernels/resize.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr int kAttempts = 10;

struct CropRange {
  float scale_min, scale_max;          // Area fraction.
  float log_ratio_min, log_ratio_max;  // log(width / height).
  float ratio_min, ratio_max;
};

// Python's round(): halves to even.
uint32_t RoundHalfEven(double x) { return static_cast<uint32_t>(std::nearbyint(x)); }

// torchvision.transforms.RandomResizedCrop.get_params, with the draws listed in op.h.
PixelRect CropWindow(uint32_t height, uint32_t width, const CropRange& range, CounterRng* rng) {
  const double area = static_cast<double>(height) * width;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const double target_area = area * rng->UniformFloat(range.scale_min, range.scale_max);
    const double aspect = std::exp(rng->UniformFloat(range.log_ratio_min, range.log_ratio_max));
    const uint32_t w = RoundHalfEven(std::sqrt(target_area * aspect));
    const uint32_t h = RoundHalfEven(std::sqrt(target_area / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const auto top = static_cast<uint32_t>(rng->UniformInt(uint64_t{height} - h + 1));
      const auto left = static_cast<uint32_t>(rng->UniformInt(uint64_t{width} - w + 1));
      return PixelRect{top, left, h, w};
    }
  }
  // Fallback: the central crop, clamped to the ratio range.
  const double in_ratio = static_cast<double>(width) / height;
  uint32_t w = width, h = height;
  if (in_ratio < range.ratio_min) {
    h = std::min(height, std::max(1u, RoundHalfEven(w / double{range.ratio_min})));
  } else if (in_ratio > range.ratio_max) {
    w = std::min(width, std::max(1u, RoundHalfEven(h * double{range.ratio_max})));
  }
  return PixelRect{(height - h) / 2, (width - w) / 2, h, w};
}

class RandomResizedCropOp final : public Op, public DrawsParams {
 public:
  RandomResizedCropOp(const ImageShape& input, uint32_t height, uint32_t width,
                      const CropRange& range, Interpolation interpolation)
      : Op("random_resized_crop", input, ImageShape{height, width, input.channels, input.type}),
        range_(range),
        interpolation_(interpolation) {}

  bool ReadsWindow() const override { return true; }

  std::optional<PixelRect> DrawWindow(const ImageShape& in, CounterRng* rng) const override {
    return CropWindow(in.height, in.width, range_, rng);
  }

  // v2's resized_crop: crop, then resize to the output size.
  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    const PixelRect w = *DrawWindow(in, rng);
    moves->push_back(CropMove(in.height, in.width, w.top, w.left, w.height, w.width));
    moves->push_back(ResizeMove(w.height, w.width, output_shape().height, output_shape().width));
  }

  absl::Status ApplyToWindow(const ImageView& in, const PixelRect& window,
                             const ImageView& out) const override {
    return Resize(in, window, interpolation_, out);
  }

  // Not for kAntialias, whose point is equality with PIL on the full-resolution pixels.
  bool WindowMayBeDownscaled() const override {
    return interpolation_ != Interpolation::kAntialias;
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    return ApplyToWindow(in, *DrawWindow(in.shape, rng), out);
  }

  // [top, left, height, width] of the crop.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    const PixelRect w = *DrawWindow(in, rng);
    return {static_cast<double>(w.top), static_cast<double>(w.left), static_cast<double>(w.height),
            static_cast<double>(w.width)};
  }

 private:
  const CropRange range_;
  const Interpolation interpolation_;
};

absl::Status CheckRange(absl::string_view name, float lo, float hi, float max) {
  if (!(lo > 0) || !(hi >= lo) || !(hi <= max)) {
    return absl::InvalidArgumentError(absl::StrCat(name, "_min and ", name,
                                                   "_max must satisfy 0 < ", name, "_min <= ", name,
                                                   "_max <= ", max, ", got ", lo, " and ", hi));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomResizedCropOp(const stoker::v1::Op& op,
                                                              const ImageShape& input) {
  const stoker::v1::RandomResizedCropOp& args = op.random_resized_crop();
  RETURN_IF_ERROR(CheckWindow(args.height(), args.width(), ImageShape{}));
  ASSIGN_OR_RETURN(const Interpolation interpolation, ParseInterpolation(args.interpolation()));
  CropRange range;
  range.scale_min = args.scale_min() == 0 ? 0.08f : args.scale_min();
  range.scale_max = args.scale_max() == 0 ? 1.0f : args.scale_max();
  range.ratio_min = args.ratio_min() == 0 ? 3.0f / 4.0f : args.ratio_min();
  range.ratio_max = args.ratio_max() == 0 ? 4.0f / 3.0f : args.ratio_max();
  RETURN_IF_ERROR(CheckRange("scale", range.scale_min, range.scale_max, 1.0f));
  RETURN_IF_ERROR(CheckRange("ratio", range.ratio_min, range.ratio_max, 1e6f));
  range.log_ratio_min = std::log(range.ratio_min);
  range.log_ratio_max = std::log(range.ratio_max);
  return std::make_unique<RandomResizedCropOp>(input, args.height(), args.width(), range,
                                               interpolation);
}

}  // namespace

OpSchema RandomResizedCropOpSchema() {
  return OpSchema{
      "random_resized_crop",
      stoker::v1::Op::kRandomResizedCrop,
      "torchvision RandomResizedCrop: up to 10 tries of a window with area fraction in "
      "[scale_min, scale_max] and aspect ratio (log-uniform) in [ratio_min, ratio_max] that "
      "fits, else the central crop clamped to the ratio range; then resized to height x width "
      "(0 = bilinear, 1 = area, 2 = antialias as PIL). uint8 or float32, 1 to 4 channels.",
      {
          {"height", ArgType::kInt, "", "Output height, > 0.", AtLeast(1)},
          {"width", ArgType::kInt, "", "Output width, > 0.", AtLeast(1)},
          {"scale_min", ArgType::kFloat, "0.08", "Smallest area fraction, > 0."},
          {"scale_max", ArgType::kFloat, "1.0", "Largest area fraction, <= 1."},
          {"ratio_min", ArgType::kFloat, "0.75", "Smallest width/height ratio, > 0."},
          {"ratio_max", ArgType::kFloat, "1.3333", "Largest width/height ratio."},
          {"interpolation", ArgType::kInt, "0",
           "0 = bilinear, 1 = area, 2 = antialias (PIL's bilinear, torchvision on PIL images).",
           Closed(0, 2)},
      },
      &CreateRandomResizedCropOp,
      {"`RandomResizedCrop`", "any", "top, left, height, width, area: KS against `get_params`"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

}  // namespace stoker
