// random_iou_crop: torchvision.transforms.v2's RandomIoUCrop (SSD's crop, the detection
// references' IoU crop). It chooses its window from the sample's boxes (Op::ChoosesFromBoxes),
// so it runs only in pipelines with targets, and its output size is drawn per sample.

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "augment/kernels/geometry.h"
#include "augment/ops/ops.h"

namespace stoker {
namespace {

// v2 draws options until one ends the loop; an option >= 1 always does, but a list without one
// and a sample whose boxes fit no crop would loop for ever: after this many, the sample is left
// as it is (the chance that 100 draws miss 1.0 among v2's 7 options is about 2e-7).
constexpr int kMaxOptionDraws = 100;
constexpr uint32_t kMaxTrials = 1000;

struct IouCropArgs {
  float min_scale = 0.3f;  // v2's defaults
  float max_scale = 1.0f;
  float min_aspect_ratio = 0.5f;
  float max_aspect_ratio = 2.0f;
  std::vector<float> options = {0.0f, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f, 1.0f};
  uint32_t trials = 40;
};

// torchvision.ops.box_iou of XYXY box `b` with the window [left, right) × [top, bottom).
float WindowIou(const float* b, float left, float top, float right, float bottom) {
  const float inter_w = std::max(0.0f, std::min(b[2], right) - std::max(b[0], left));
  const float inter_h = std::max(0.0f, std::min(b[3], bottom) - std::max(b[1], top));
  const float inter = inter_w * inter_h;
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  return inter / (area_b + (right - left) * (bottom - top) - inter);
}

// True when some box has its centre strictly inside the window, and the largest IoU of those
// boxes with the window is at least `min_iou` (v2's two checks).
bool WindowPasses(absl::Span<const float> boxes, const PixelRect& w, float min_iou) {
  const float left = w.left, top = w.top;
  const float right = left + w.width, bottom = top + w.height;
  bool any_inside = false;
  float best = 0.0f;
  for (size_t i = 0; i + 4 <= boxes.size(); i += 4) {
    const float* b = &boxes[i];
    const float cx = 0.5f * (b[0] + b[2]), cy = 0.5f * (b[1] + b[3]);
    if (!(left < cx && cx < right && top < cy && cy < bottom)) continue;
    any_inside = true;
    best = std::max(best, WindowIou(b, left, top, right, bottom));
  }
  return any_inside && !(best < min_iou);
}

// v2's RandomIoUCrop._get_params with op.h's draws: the crop window, or nullopt to leave the
// sample as it is.
std::optional<PixelRect> ChooseWindow(const ImageShape& in, absl::Span<const float> boxes,
                                      const IouCropArgs& args, CounterRng* rng) {
  const float scale_span = args.max_scale - args.min_scale;
  for (int draw = 0; draw < kMaxOptionDraws; ++draw) {
    const float min_iou = args.options[rng->UniformInt(args.options.size())];
    if (min_iou >= 1.0f) return std::nullopt;
    for (uint32_t trial = 0; trial < args.trials; ++trial) {
      const float r_width = args.min_scale + scale_span * rng->UniformFloat();
      const float r_height = args.min_scale + scale_span * rng->UniformFloat();
      const auto new_w = static_cast<uint32_t>(static_cast<float>(in.width) * r_width);
      const auto new_h = static_cast<uint32_t>(static_cast<float>(in.height) * r_height);
      if (new_h == 0) continue;  // v2 would divide by zero here (a tiny image only).
      const double aspect = static_cast<double>(new_w) / new_h;
      if (!(args.min_aspect_ratio <= aspect && aspect <= args.max_aspect_ratio)) continue;
      const float r_left = rng->UniformFloat();
      const float r_top = rng->UniformFloat();
      const auto left = static_cast<uint32_t>(static_cast<float>(in.width - new_w) * r_left);
      const auto top = static_cast<uint32_t>(static_cast<float>(in.height - new_h) * r_top);
      const PixelRect window{top, left, new_h, new_w};
      if (WindowPasses(boxes, window, min_iou)) return window;
    }
  }
  return std::nullopt;
}

class RandomIouCropOp final : public Op {
 public:
  RandomIouCropOp(const ImageShape& input, IouCropArgs args)
      : Op("random_iou_crop", input, ImageShape{0, 0, input.channels, input.type}),
        args_(std::move(args)) {}

  bool DrawsOutputSize() const override { return true; }
  bool ChoosesFromBoxes() const override { return true; }

  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    return output_shape();
  }

  absl::StatusOr<ImageShape> DrawOutputShape(const ImageShape& in, CounterRng rng,
                                             absl::Span<const float> boxes) const override {
    const std::optional<PixelRect> window = ChooseWindow(in, boxes, args_, &rng);
    if (!window) return in;
    return ImageShape{window->height, window->width, in.channels, in.type};
  }

  absl::Status ApplyTrackedWithBoxes(const ImageView& in, absl::Span<const float> boxes,
                                     CounterRng* rng, const ImageView& out,
                                     TargetMoves* moves) const override {
    const std::optional<PixelRect> window = ChooseWindow(in.shape, boxes, args_, rng);
    if (!window) {
      std::memcpy(out.data, in.data, in.shape.bytes());
      return absl::OkStatus();
    }
    moves->push_back(IouCropMove(in.shape.height, in.shape.width, window->top, window->left,
                                 window->height, window->width));
    Crop(in, window->top, window->left, out);
    return absl::OkStatus();
  }

  // Without boxes no crop passes: the draws of a sample without boxes, and the image as it is.
  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    TargetMoves none;
    return ApplyTrackedWithBoxes(in, {}, rng, out, &none);
  }

 private:
  const IouCropArgs args_;
};

absl::Status CheckPositiveRange(absl::string_view low, float lo, absl::string_view high, float hi,
                                float max) {
  if (lo > 0 && lo <= hi && hi <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(low, " and ", high, " must satisfy 0 < ", low,
                                                 " <= ", high, " <= ", max, ", got ", lo, " and ",
                                                 hi));
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomIouCropOp(const v1::Op& op,
                                                          const ImageShape& input) {
  const v1::RandomIoUCropOp& proto = op.random_iou_crop();
  IouCropArgs args;
  if (proto.min_scale() != 0) args.min_scale = proto.min_scale();
  if (proto.max_scale() != 0) args.max_scale = proto.max_scale();
  if (proto.min_aspect_ratio() != 0) args.min_aspect_ratio = proto.min_aspect_ratio();
  if (proto.max_aspect_ratio() != 0) args.max_aspect_ratio = proto.max_aspect_ratio();
  if (proto.trials() != 0) args.trials = proto.trials();
  if (absl::Status s =
          CheckPositiveRange("min_scale", args.min_scale, "max_scale", args.max_scale, 1.0f);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPositiveRange("min_aspect_ratio", args.min_aspect_ratio,
                                          "max_aspect_ratio", args.max_aspect_ratio, 1e6f);
      !s.ok()) {
    return s;
  }
  if (args.trials > kMaxTrials) {
    return absl::InvalidArgumentError(
        absl::StrCat("trials must be in [1, ", kMaxTrials, "], got ", args.trials));
  }
  if (!proto.sampler_options().empty()) {
    args.options.assign(proto.sampler_options().begin(), proto.sampler_options().end());
  }
  for (size_t i = 0; i < args.options.size(); ++i) {
    if (!(args.options[i] >= 0.0f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sampler_options[", i, "] must be >= 0, got ", args.options[i]));
    }
  }
  return std::make_unique<RandomIouCropOp>(input, std::move(args));
}

}  // namespace

OpSchema RandomIouCropOpSchema() {
  return OpSchema{
      "random_iou_crop",
      v1::Op::kRandomIouCrop,
      "torchvision.transforms.v2 RandomIoUCrop (SSD): draws a minimum IoU from sampler_options "
      "(>= 1: the sample is left as is), then tries up to `trials` crops with width and height "
      "factors in [min_scale, max_scale] and aspect ratio in [min_aspect_ratio, "
      "max_aspect_ratio], keeping the first that holds the centre of a box overlapping it with "
      "at least that IoU. Boxes centred outside the crop become degenerate (follow with "
      "sanitize_boxes). Needs the sample's boxes: refused in a pipeline without targets. The "
      "output size varies per sample. Any pixel type.",
      {{"min_scale", ArgType::kFloat, "0.3", "Smallest side factor, > 0."},
       {"max_scale", ArgType::kFloat, "1.0", "Largest side factor, <= 1."},
       {"min_aspect_ratio", ArgType::kFloat, "0.5", "Smallest width/height, > 0."},
       {"max_aspect_ratio", ArgType::kFloat, "2.0", "Largest width/height."},
       {"sampler_options", ArgType::kFloatList, "[0, 0.1, 0.3, 0.5, 0.7, 0.9, 1]",
        "Minimum IoUs to draw from, each >= 0; >= 1 leaves the sample as is.", AtLeast(0)},
       {"trials", ArgType::kInt, "40", "Crops tried per drawn option.", Closed(0, kMaxTrials)}},
      &CreateRandomIouCropOp,
      {"v2 `RandomIoUCrop`", "any", "boxes kept and draws: targets tests (mask oracle)"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

}  // namespace stoker
