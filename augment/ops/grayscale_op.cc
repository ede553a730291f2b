// grayscale: torchvision's Grayscale(num_output_channels).

#include <memory>

#include "augment/kernels/color.h"
#include "augment/ops/ops.h"

namespace stoker {
namespace {

class GrayscaleOp final : public Op {
 public:
  // REQUIRES: input has 3 channels; channels is 1 or 3.
  GrayscaleOp(const ImageShape& input, uint32_t channels)
      : Op("grayscale", input, ImageShape{input.height, input.width, channels, input.type}) {}

  bool SupportsInPlace() const override { return output_shape().channels == 3; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    Grayscale(in, out);
    return absl::OkStatus();
  }
};

absl::StatusOr<std::unique_ptr<Op>> CreateGrayscaleOp(const stoker::v1::Op& op,
                                                      const ImageShape& input) {
  const uint32_t channels = op.grayscale().channels() == 0 ? 1 : op.grayscale().channels();
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat("channels must be 1 or 3, got ", channels));
  }
  if (input.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("requires 3-channel (RGB) input, got ", input.channels));
  }
  return std::make_unique<GrayscaleOp>(input, channels);
}

}  // namespace

OpSchema GrayscaleOpSchema() {
  return OpSchema{"grayscale",
                  stoker::v1::Op::kGrayscale,
                  "RGB to gray, 0.2989 R + 0.587 G + 0.114 B (torchvision Grayscale; uint8 "
                  "truncated), written to 1 or 3 channels. uint8 or float32.",
                  {{"channels", ArgType::kInt, "1", "Output channels, 1 or 3."}},
                  &CreateGrayscaleOp,
                  {"`Grayscale`", "uint8, float32", ""},
                  TargetSupport::kUnchanged,
                  RngDraws::kNever};
}

}  // namespace stoker
