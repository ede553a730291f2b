// horizontal_flip: mirror left-right with probability p.

#include <cmath>
#include <cstring>
#include <memory>

#include "augment/kernels/geometry.h"
#include "augment/ops/ops.h"

namespace stoker {
namespace {

constexpr float kDefaultFlipProbability = 0.5f;

class HorizontalFlipOp final : public Op {
 public:
  // REQUIRES: p in [0, 1].
  HorizontalFlipOp(const ImageShape& input, float p) : Op("horizontal_flip", input, input), p_(p) {}

  bool SupportsInPlace() const override { return true; }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    // One draw, whatever p is (op.h).
    if (rng->UniformFloat() < p_) {
      HorizontalFlip(in, out);
    } else if (in.data != out.data) {
      std::memcpy(out.data, in.data, in.shape.bytes());
    }
    return absl::OkStatus();
  }

 private:
  const float p_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateHorizontalFlipOp(const stoker::v1::Op& op,
                                                           const ImageShape& input) {
  const stoker::v1::HorizontalFlipOp& args = op.horizontal_flip();
  const float p = args.has_p() ? args.p() : kDefaultFlipProbability;
  if (!(p >= 0.0f && p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", p));
  }
  return std::make_unique<HorizontalFlipOp>(input, p);
}

}  // namespace

OpSchema HorizontalFlipOpSchema() {
  return OpSchema{"horizontal_flip",
                  stoker::v1::Op::kHorizontalFlip,
                  "Mirrors the image left-right with probability p. Any pixel type.",
                  {{"p", ArgType::kFloat, "0.5", "Flip probability in [0, 1]."}},
                  &CreateHorizontalFlipOp};
}

}  // namespace stoker
