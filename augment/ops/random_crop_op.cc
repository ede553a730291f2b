// random_crop: a height × width window at a position drawn from the sample's RNG.

#include <memory>

#include "augment/kernels/geometry.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

class RandomCropOp final : public WindowOp {
 public:
  RandomCropOp(const ImageShape& input, uint32_t height, uint32_t width)
      : WindowOp("random_crop", input, height, width) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    // Draw order (op.h): top, then left.
    const uint64_t top = rng->UniformInt(uint64_t{in.shape.height} - out.shape.height + 1);
    const uint64_t left = rng->UniformInt(uint64_t{in.shape.width} - out.shape.width + 1);
    Crop(in, static_cast<uint32_t>(top), static_cast<uint32_t>(left), out);
    return absl::OkStatus();
  }
};

absl::StatusOr<std::unique_ptr<Op>> CreateRandomCropOp(const stoker::v1::Op& op,
                                                       const ImageShape& input) {
  const stoker::v1::RandomCropOp& args = op.random_crop();
  RETURN_IF_ERROR(CheckWindow(args.height(), args.width(), input));
  return std::make_unique<RandomCropOp>(input, args.height(), args.width());
}

}  // namespace

OpSchema RandomCropOpSchema() {
  return OpSchema{"random_crop",
                  stoker::v1::Op::kRandomCrop,
                  "Crops a height x width window at a uniformly drawn position (top, then left). "
                  "Any pixel type.",
                  {
                      {"height", ArgType::kInt, "", "Output height, > 0 and <= input height."},
                      {"width", ArgType::kInt, "", "Output width, > 0 and <= input width."},
                  },
                  &CreateRandomCropOp};
}

}  // namespace stoker
