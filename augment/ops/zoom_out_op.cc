// zoom_out: torchvision.transforms.v2's RandomZoomOut (the detection references' zoom out):
// the image placed on a larger canvas of a constant fill, at a random position. Its output size
// is drawn per sample (Op::DrawsOutputSize); a canvas over the decode's pixel budget makes the
// sample a bad sample (too_large), so no input sizes memory beyond what a decode may.

#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "augment/kernels/decode.h"
#include "augment/kernels/pad.h"
#include "augment/ops/ops.h"
#include "common/bad_sample.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr float kDefaultSideMin = 1.0f;  // v2's side_range
constexpr float kDefaultSideMax = 4.0f;
constexpr float kLargestSide = 16.0f;  // Bounds the canvas's memory (256 times the image's).
constexpr float kDefaultZoomP = 0.5f;

struct ZoomArgs {
  float side_min = kDefaultSideMin;
  float side_max = kDefaultSideMax;
  float p = kDefaultZoomP;
  std::vector<float> fill;  // One per channel.
};

class ZoomOutOp final : public Op {
 public:
  ZoomOutOp(const ImageShape& input, ZoomArgs args)
      : Op("zoom_out", input, ImageShape{0, 0, input.channels, input.type}),
        args_(std::move(args)) {}

  bool DrawsOutputSize() const override { return true; }

  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    return output_shape();
  }

  absl::StatusOr<ImageShape> DrawOutputShape(const ImageShape& in, CounterRng rng,
                                             absl::Span<const float> boxes) const override {
    const std::optional<Padding> padding = DrawPadding(in, &rng);
    if (!padding) return in;
    const ImageShape canvas = PaddedShape(in, *padding);
    if (uint64_t{canvas.height} * canvas.width > kDecodeDefaultMaxPixels) {
      return BadSampleError(
          BadSampleReason::kTooLarge,
          absl::StrCat("a zoomed-out canvas of ", canvas.width, "x", canvas.height,
                       " exceeds the pixel budget of ", kDecodeDefaultMaxPixels));
    }
    return canvas;
  }

  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    const std::optional<Padding> padding = DrawPadding(in, rng);
    if (padding) moves->push_back(PadMove(in.height, in.width, *padding, PadMode::kConstant));
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    const std::optional<Padding> padding = DrawPadding(in.shape, rng);
    if (padding) {
      Pad(in, *padding, PadMode::kConstant, args_.fill.data(), out);
    } else {
      std::memcpy(out.data, in.data, in.shape.bytes());
    }
    return absl::OkStatus();
  }

 private:
  // v2's _get_params, with op.h's draws; nullopt when not applied.
  std::optional<Padding> DrawPadding(const ImageShape& in, CounterRng* rng) const {
    if (!(rng->UniformFloat() < args_.p)) return std::nullopt;
    const float r = args_.side_min + (args_.side_max - args_.side_min) * rng->UniformFloat();
    const auto canvas_width = static_cast<uint32_t>(static_cast<float>(in.width) * r);
    const auto canvas_height = static_cast<uint32_t>(static_cast<float>(in.height) * r);
    const float r_left = rng->UniformFloat();
    const float r_top = rng->UniformFloat();
    const auto left = static_cast<uint32_t>(static_cast<float>(canvas_width - in.width) * r_left);
    const auto top = static_cast<uint32_t>(static_cast<float>(canvas_height - in.height) * r_top);
    return Padding{left, top, canvas_width - in.width - left, canvas_height - in.height - top};
  }

  const ZoomArgs args_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateZoomOutOp(const v1::Op& op, const ImageShape& input) {
  const v1::ZoomOutOp& proto = op.zoom_out();
  ZoomArgs args;
  if (proto.side_min() != 0) args.side_min = proto.side_min();
  if (proto.side_max() != 0) args.side_max = proto.side_max();
  if (!(args.side_min >= 1.0f && args.side_min <= args.side_max && args.side_max <= kLargestSide)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "side_min and side_max must satisfy 1 <= side_min <= side_max <= ", kLargestSide, ", got ",
        args.side_min, " and ", args.side_max));
  }
  if (proto.has_p()) args.p = proto.p();
  if (!(args.p >= 0.0f && args.p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", args.p));
  }
  ASSIGN_OR_RETURN(args.fill, PerChannelValues("fill", proto.fill(), input.channels));
  if (args.fill.empty()) args.fill.assign(input.channels, 0.0f);
  return std::make_unique<ZoomOutOp>(input, std::move(args));
}

}  // namespace

OpSchema ZoomOutOpSchema() {
  return OpSchema{
      "zoom_out",
      v1::Op::kZoomOut,
      "torchvision.transforms.v2 RandomZoomOut: with probability p, places the image at a "
      "random position of a canvas side_min..side_max times its size, filled with `fill`. "
      "The output size varies per sample (end the pipeline with a fixed-size op). Any pixel "
      "type.",
      {{"fill", ArgType::kFloatList, "[0]", "Constant fill: 1 value or one per channel."},
       {"side_min", ArgType::kFloat, "1.0", "Smallest canvas side factor, >= 1."},
       {"side_max", ArgType::kFloat, "4.0", "Largest canvas side factor, <= 16."},
       {"p", ArgType::kFloat, "0.5", "Probability of zooming out.", Closed(0, 1)}},
      &CreateZoomOutOp,
      {"v2 `RandomZoomOut` (`side_range` = [side_min, side_max])", "any",
       "draws and padding: targets tests (mask oracle)"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

}  // namespace stoker
