// to_float: uint8 → float32 in [0, 1].

#include <memory>

#include "augment/kernels/to_float.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

class ToFloatOp final : public Op {
 public:
  explicit ToFloatOp(const ImageShape& input)
      : Op("to_float", input,
           ImageShape{input.height, input.width, input.channels, PixelType::kFloat32}) {}

  bool MapsElementsPerChannel() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    ToFloat(in, out);
    return absl::OkStatus();
  }
};

absl::StatusOr<std::unique_ptr<Op>> CreateToFloatOp(const stoker::v1::Op& op,
                                                    const ImageShape& input) {
  RETURN_IF_ERROR(RequirePixelType(input, PixelType::kUint8));
  return std::make_unique<ToFloatOp>(input);
}

}  // namespace

OpSchema ToFloatOpSchema() {
  return OpSchema{"to_float",
                  stoker::v1::Op::kToFloat,
                  "Converts uint8 pixels to float32 in [0, 1] (x / 255), like torchvision's "
                  "ToTensor without the layout change. Requires uint8 input.",
                  {},
                  &CreateToFloatOp,
                  {"`ToTensor`, `ConvertImageDtype(float32)`, v2 `ToDtype(float32, scale=True)`",
                   "uint8 → float32", "exact"},
                  TargetSupport::kUnchanged,
                  RngDraws::kNever};
}

}  // namespace stoker
