// normalize: per channel (x - mean[c]) / std[c] on float32 images.

#include <cmath>
#include <memory>
#include <vector>

#include "augment/kernels/normalize.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

class NormalizeOp final : public Op {
 public:
  // REQUIRES: mean and inv_std hold input.channels values.
  NormalizeOp(const ImageShape& input, const std::vector<float>& mean,
              const std::vector<float>& inv_std)
      : Op("normalize", input, input),
        mean_(mean),
        inv_std_(inv_std),
        mean_row_(size_t{input.width} * input.channels),
        inv_std_row_(size_t{input.width} * input.channels) {
    RepeatPerChannel(mean.data(), input.channels, input.width, mean_row_.data());
    RepeatPerChannel(inv_std.data(), input.channels, input.width, inv_std_row_.data());
  }

  bool SupportsInPlace() const override { return true; }
  bool MapsElementsPerChannel() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    if (input_shape().width != 0) {
      Normalize(in, mean_row_.data(), inv_std_row_.data(), out);
      return absl::OkStatus();
    }
    // The width varies per sample: build the rows in scratch.
    const uint32_t row = in.shape.width * in.shape.channels;
    scratch->Reshape(ImageShape{2, row, 1, PixelType::kFloat32});
    float* rows = scratch->view().pixels<float>();
    RepeatPerChannel(mean_.data(), in.shape.channels, in.shape.width, rows);
    RepeatPerChannel(inv_std_.data(), in.shape.channels, in.shape.width, rows + row);
    Normalize(in, rows, rows + row, out);
    return absl::OkStatus();
  }

 private:
  const std::vector<float> mean_;
  const std::vector<float> inv_std_;
  // Per-channel constants repeated over one image row (augment/kernels/normalize.h); empty when
  // the width varies per sample.
  std::vector<float> mean_row_;
  std::vector<float> inv_std_row_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateNormalizeOp(const stoker::v1::Op& op,
                                                      const ImageShape& input) {
  const stoker::v1::NormalizeOp& args = op.normalize();
  RETURN_IF_ERROR(RequirePixelType(input, PixelType::kFloat32, " (add to_float before it)"));
  if (static_cast<uint32_t>(args.mean_size()) != input.channels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mean has ", args.mean_size(), " values but the image has ", input.channels, " channels"));
  }
  if (static_cast<uint32_t>(args.std_size()) != input.channels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "std has ", args.std_size(), " values but the image has ", input.channels, " channels"));
  }
  std::vector<float> mean(args.mean().begin(), args.mean().end());
  std::vector<float> inv_std(input.channels);
  for (int c = 0; c < args.std_size(); ++c) {
    if (!std::isfinite(args.mean(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("mean[", c, "] must be finite, got ", args.mean(c)));
    }
    if (!(args.std(c) > 0) || !std::isfinite(args.std(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("std[", c, "] must be > 0, got ", args.std(c)));
    }
    inv_std[static_cast<size_t>(c)] = 1.0f / args.std(c);
  }
  return std::make_unique<NormalizeOp>(input, mean, inv_std);
}

}  // namespace

OpSchema NormalizeOpSchema() {
  return OpSchema{
      "normalize",
      stoker::v1::Op::kNormalize,
      "Per channel (x - mean[c]) / std[c], computed as (x - mean[c]) * (1 / std[c]). Requires "
      "float32 input.",
      {
          {"mean", ArgType::kFloatList, "", "One mean per channel."},
          {"std", ArgType::kFloatList, "", "One standard deviation per channel, each > 0.",
           Above(0)},
      },
      &CreateNormalizeOp,
      {"`Normalize`", "float32", "≤ 1e-4"},
      TargetSupport::kUnchanged,
      RngDraws::kNever};
}

}  // namespace stoker
