// random_crop: torchvision RandomCrop: optional padding (fixed, and pad_if_needed), then a
// height × width window at a position drawn from the sample's RNG.

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "augment/kernels/geometry.h"
#include "augment/kernels/pad.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

class RandomCropOp final : public Op, public DrawsParams {
 public:
  // REQUIRES: the window fits the padded input where its size is known.
  RandomCropOp(const ImageShape& input, uint32_t height, uint32_t width, PadArgs pad,
               bool pad_if_needed)
      : Op("random_crop", input, ImageShape{height, width, input.channels, input.type}),
        pad_(std::move(pad)),
        pad_if_needed_(pad_if_needed) {}

  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    const ImageShape padded = PaddedShape(PaddedShape(in, pad_.padding), PaddingIfNeeded(in));
    RETURN_IF_ERROR(CheckWindow(output_shape().height, output_shape().width, padded));
    return output_shape();
  }

  // Without fixed padding, an input pad_if_needed leaves alone is read as one window.
  bool ReadsWindow() const override {
    const Padding& p = pad_.padding;
    return p.left == 0 && p.top == 0 && p.right == 0 && p.bottom == 0;
  }

  std::optional<PixelRect> DrawWindow(const ImageShape& in, CounterRng* rng) const override {
    if (PaddedShape(PaddedShape(in, pad_.padding), PaddingIfNeeded(in)) != in) return std::nullopt;
    return DrawPosition(in, rng);
  }

  // Apply's padding passes (each a pad move where it pads), then the window.
  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    const ImageShape once = PaddedShape(in, pad_.padding);
    const Padding then = PaddingIfNeeded(in);
    const ImageShape padded = PaddedShape(once, then);
    if (once != in) moves->push_back(PadMove(in.height, in.width, pad_.padding, pad_.mode));
    if (padded != once) moves->push_back(PadMove(once.height, once.width, then, pad_.mode));
    const PixelRect w = DrawPosition(padded, rng);
    moves->push_back(CropMove(padded.height, padded.width, w.top, w.left, w.height, w.width));
  }

  absl::Status ApplyToWindow(const ImageView& in, const PixelRect& window,
                             const ImageView& out) const override {
    Crop(in, window.top, window.left, out);
    return absl::OkStatus();
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    // torchvision pads twice: `padding`, then pad_if_needed's on the padded image.
    const Padding then = PaddingIfNeeded(in.shape);
    const ImageShape padded = PaddedShape(PaddedShape(in.shape, pad_.padding), then);
    ImageView source = in;
    if (padded != in.shape) {
      scratch->Reshape(padded);
      Pad(in, pad_.padding, pad_.mode, pad_.fill.data(), scratch->view(), then);
      source = scratch->view();
    }
    return ApplyToWindow(source, DrawPosition(source.shape, rng), out);
  }

  // [top, left] in the padded image.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    const PixelRect w =
        DrawPosition(PaddedShape(PaddedShape(in, pad_.padding), PaddingIfNeeded(in)), rng);
    return {static_cast<double>(w.top), static_cast<double>(w.left)};
  }

 private:
  // The window's position in `source` (the padded input). Draw order (op.h): top, then left.
  PixelRect DrawPosition(const ImageShape& source, CounterRng* rng) const {
    const ImageShape& out = output_shape();
    const uint64_t top = rng->UniformInt(uint64_t{source.height} - out.height + 1);
    const uint64_t left = rng->UniformInt(uint64_t{source.width} - out.width + 1);
    return PixelRect{static_cast<uint32_t>(top), static_cast<uint32_t>(left), out.height,
                     out.width};
  }

  // pad_if_needed's padding of the padded image: both sides of a dimension still smaller than
  // the window grow by the difference (torchvision pads [size - extent, 0]).
  Padding PaddingIfNeeded(const ImageShape& in) const {
    Padding p;
    if (!pad_if_needed_) return p;
    const ImageShape padded = PaddedShape(in, pad_.padding);
    if (padded.width < output_shape().width) {
      p.left = p.right = output_shape().width - padded.width;
    }
    if (padded.height < output_shape().height) {
      p.top = p.bottom = output_shape().height - padded.height;
    }
    return p;
  }

  const PadArgs pad_;
  const bool pad_if_needed_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateRandomCropOp(const v1::Op& op, const ImageShape& input) {
  const v1::RandomCropOp& args = op.random_crop();
  ASSIGN_OR_RETURN(PadArgs pad,
                   ParsePadArgs(args.padding(), args.fill(), args.padding_mode(), input));
  if (args.pad_if_needed() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("pad_if_needed must be 0 or 1, got ", args.pad_if_needed()));
  }
  auto crop = std::make_unique<RandomCropOp>(input, args.height(), args.width(), std::move(pad),
                                             args.pad_if_needed() == 1);
  const ImageShape varying{};
  if (input.height == 0 || input.width == 0) {
    RETURN_IF_ERROR(CheckWindow(args.height(), args.width(), varying));
  } else {
    RETURN_IF_ERROR(crop->OutputShapeFor(input).status());
  }
  return crop;
}

}  // namespace

OpSchema RandomCropOpSchema() {
  return OpSchema{
      "random_crop",
      v1::Op::kRandomCrop,
      "torchvision RandomCrop: pads (padding, fill, padding_mode as pad; pad_if_needed=1 pads "
      "both sides of a dimension smaller than the window by the difference), then crops a "
      "height x width window at a uniformly drawn position (top, then left). Any pixel type.",
      {
          {"height", ArgType::kInt, "", "Output height, > 0 and <= the padded input height."},
          {"width", ArgType::kInt, "", "Output width, > 0 and <= the padded input width."},
          {"padding", ArgType::kFloatList, "[]", "As pad's; empty: no fixed padding."},
          {"fill", ArgType::kFloatList, "[0]", "As pad's."},
          {"padding_mode", ArgType::kInt, "0", "As pad's.", Closed(0, 3)},
          {"pad_if_needed", ArgType::kInt, "0", "1: pad what is smaller than the window.",
           Closed(0, 1)},
      },
      &CreateRandomCropOp,
      {"`RandomCrop`", "any", "padding equal; top, left: χ² against uniform"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

}  // namespace stoker
