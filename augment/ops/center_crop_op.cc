// center_crop: the centered height × width window, like torchvision's CenterCrop.

#include <cmath>
#include <memory>
#include <optional>

#include "augment/kernels/geometry.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// torchvision: int(round((input - output) / 2.0)), Python rounding (halves to even).
uint32_t CenteredOffset(uint32_t input, uint32_t output) {
  return static_cast<uint32_t>(std::nearbyint((static_cast<double>(input) - output) / 2.0));
}

class CenterCropOp final : public WindowOp {
 public:
  CenterCropOp(const ImageShape& input, uint32_t height, uint32_t width)
      : WindowOp("center_crop", input, height, width) {}

  bool ReadsWindow() const override { return true; }

  std::optional<PixelRect> DrawWindow(const ImageShape& in, CounterRng* rng) const override {
    const ImageShape& out = output_shape();
    return PixelRect{CenteredOffset(in.height, out.height), CenteredOffset(in.width, out.width),
                     out.height, out.width};
  }

  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    const PixelRect w = *DrawWindow(in, rng);
    moves->push_back(CropMove(in.height, in.width, w.top, w.left, w.height, w.width));
  }

  absl::Status ApplyToWindow(const ImageView& in, const PixelRect& window,
                             const ImageView& out) const override {
    Crop(in, window.top, window.left, out);
    return absl::OkStatus();
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    return ApplyToWindow(in, *DrawWindow(in.shape, rng), out);
  }
};

absl::StatusOr<std::unique_ptr<Op>> CreateCenterCropOp(const stoker::v1::Op& op,
                                                       const ImageShape& input) {
  const stoker::v1::CenterCropOp& args = op.center_crop();
  RETURN_IF_ERROR(CheckWindow(args.height(), args.width(), input));
  return std::make_unique<CenterCropOp>(input, args.height(), args.width());
}

}  // namespace

OpSchema CenterCropOpSchema() {
  return OpSchema{"center_crop",
                  stoker::v1::Op::kCenterCrop,
                  "Crops the centered height x width window (torchvision CenterCrop; offsets "
                  "round((in - out) / 2), halves to even). The input must be at least that "
                  "large (checked per sample after decode). Any pixel type.",
                  {
                      {"height", ArgType::kInt, "", "Output height, > 0.", AtLeast(1)},
                      {"width", ArgType::kInt, "", "Output width, > 0.", AtLeast(1)},
                  },
                  &CreateCenterCropOp,
                  {"`CenterCrop`", "any", "exact"},
                  TargetSupport::kMoves,
                  RngDraws::kNever};
}

}  // namespace stoker
