// resize: to an exact size, or the shorter side to a length keeping the aspect ratio.

#include <memory>

#include "augment/kernels/resize.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// torchvision's Resize(int): the shorter side becomes `shorter`, the longer one
// int(shorter * longer / shorter_in) (truncated).
ImageShape ShorterSideShape(const ImageShape& in, uint32_t shorter) {
  ImageShape out = in;
  if (in.height <= in.width) {
    out.height = shorter;
    out.width = static_cast<uint32_t>(uint64_t{shorter} * in.width / in.height);
  } else {
    out.width = shorter;
    out.height = static_cast<uint32_t>(uint64_t{shorter} * in.height / in.width);
  }
  return out;
}

class ResizeOp final : public Op {
 public:
  // REQUIRES: output is the exact size, or shorter > 0 (then output is the shorter-side size of
  // `input`, or 0 × 0 when `input`'s size varies).
  ResizeOp(const ImageShape& input, const ImageShape& output, uint32_t shorter,
           Interpolation interpolation)
      : Op("resize", input, output), shorter_(shorter), interpolation_(interpolation) {}

  // Not for kAntialias: equal to PIL means resampling the full decoded image, as PIL does.
  bool ResamplesWholeImage() const override { return interpolation_ != Interpolation::kAntialias; }

  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    if (shorter_ == 0) return output_shape();
    return ShorterSideShape(in, shorter_);
  }

  // REQUIRES (op.h): OutputShapeFor(in) is OK, which it always is here.
  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    const ImageShape out = *OutputShapeFor(in);
    moves->push_back(ResizeMove(in.height, in.width, out.height, out.width));
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    return Resize(in, PixelRect{0, 0, in.shape.height, in.shape.width}, interpolation_, out);
  }

 private:
  const uint32_t shorter_;  // 0: exact size.
  const Interpolation interpolation_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateResizeOp(const stoker::v1::Op& op,
                                                   const ImageShape& input) {
  const stoker::v1::ResizeOp& args = op.resize();
  ASSIGN_OR_RETURN(const Interpolation interpolation, ParseInterpolation(args.interpolation()));
  const bool exact = args.height() != 0 || args.width() != 0;
  if (exact == (args.shorter() != 0)) {
    return absl::InvalidArgumentError(
        "set either height and width (exact size) or shorter (shorter side), not both or none");
  }
  if (exact) {
    RETURN_IF_ERROR(CheckWindow(args.height(), args.width(), ImageShape{}));
    const ImageShape output{args.height(), args.width(), input.channels, input.type};
    return std::make_unique<ResizeOp>(input, output, 0, interpolation);
  }
  const ImageShape output = input.height == 0 ? ImageShape{0, 0, input.channels, input.type}
                                              : ShorterSideShape(input, args.shorter());
  return std::make_unique<ResizeOp>(input, output, args.shorter(), interpolation);
}

}  // namespace

absl::StatusOr<Interpolation> ParseInterpolation(uint32_t value) {
  if (value == 0) return Interpolation::kBilinear;
  if (value == 1) return Interpolation::kArea;
  if (value == 2) return Interpolation::kAntialias;
  return absl::InvalidArgumentError(absl::StrCat(
      "interpolation must be 0 (bilinear), 1 (area) or 2 (antialias, PIL's), got ", value));
}

OpSchema ResizeOpSchema() {
  return OpSchema{
      "resize",
      stoker::v1::Op::kResize,
      "Resizes to height x width, or so that the shorter side is `shorter` (longer side scaled "
      "and truncated, like torchvision Resize(int)). Bilinear without antialiasing (0) or area "
      "averaging (1, for shrinking), through OpenCV, or PIL's antialiased bilinear (2, equal to "
      "torchvision on PIL images). uint8 or float32, 1 to 4 channels.",
      {
          {"height", ArgType::kInt, "0", "Exact output height (with width)."},
          {"width", ArgType::kInt, "0", "Exact output width (with height)."},
          {"shorter", ArgType::kInt, "0", "Shorter side length, instead of height and width."},
          {"interpolation", ArgType::kInt, "0",
           "0 = bilinear, 1 = area, 2 = antialias (PIL's bilinear, torchvision on PIL images).",
           Closed(0, 2)},
      },
      &CreateResizeOp,
      {"`Resize`; `interpolation=2` is PIL's antialiased bilinear", "uint8, float32",
       "2: equal to PIL; float ≤ 1e-4 (antialias=True); 0: uint8 ≤ 1 (antialias=False)"},
      TargetSupport::kMoves,
      RngDraws::kNever};
}

}  // namespace stoker
