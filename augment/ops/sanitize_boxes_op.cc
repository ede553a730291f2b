// sanitize_boxes: torchvision.transforms.v2's SanitizeBoundingBoxes. The image passes through;
// the op's one effect is on targets (augment/targets/move_targets.h: kSanitize).

#include <cstring>
#include <memory>

#include "augment/ops/ops.h"
#include "augment/targets/target_move.h"

namespace stoker {
namespace {

constexpr float kDefaultMinSize = 1.0f;  // v2's default

class SanitizeBoxesOp final : public Op {
 public:
  SanitizeBoxesOp(const ImageShape& input, float min_size)
      : Op("sanitize_boxes", input, input), min_size_(min_size) {}

  bool SupportsInPlace() const override { return true; }

  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    moves->push_back(SanitizeMove(in.height, in.width, min_size_));
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    if (in.data != out.data) std::memcpy(out.data, in.data, in.shape.bytes());
    return absl::OkStatus();
  }

 private:
  const float min_size_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateSanitizeBoxesOp(const v1::Op& op,
                                                          const ImageShape& input) {
  const v1::SanitizeBoxesOp& args = op.sanitize_boxes();
  const float min_size = args.has_min_size() ? args.min_size() : kDefaultMinSize;
  if (!(min_size >= 0.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("min_size must be >= 0, got ", min_size));
  }
  return std::make_unique<SanitizeBoxesOp>(input, min_size);
}

}  // namespace

OpSchema SanitizeBoxesOpSchema() {
  return OpSchema{
      "sanitize_boxes",
      v1::Op::kSanitizeBoxes,
      "torchvision.transforms.v2 SanitizeBoundingBoxes: drops the boxes narrower or lower than "
      "min_size pixels (or outside the canvas) with their labels, instance masks and "
      "keypoints. The image passes through unchanged; without targets the op does nothing.",
      {{"min_size", ArgType::kFloat, "1", "Smallest width and height kept, pixels.", AtLeast(0)}},
      &CreateSanitizeBoxesOp,
      {"v2 `SanitizeBoundingBoxes` (`min_size`)", "any", "boxes dropped: targets tests"},
      TargetSupport::kMoves,
      RngDraws::kNever};
}

}  // namespace stoker
