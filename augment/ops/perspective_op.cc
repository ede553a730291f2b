// random_perspective: torchvision's RandomPerspective on tensors (get_params, then
// F.perspective), through PerspectiveWarp.

#include <array>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "augment/kernels/warp.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

class RandomPerspectiveOp final : public Op, public DrawsParams {
 public:
  RandomPerspectiveOp(const ImageShape& input, float distortion_scale, float p, WarpArgs warp)
      : Op("random_perspective", input, input),
        distortion_scale_(distortion_scale),
        p_(p),
        warp_(std::move(warp)) {}

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    std::array<double, 8> end;
    std::array<double, 8> coefficients;
    if (!Draw(in.shape, rng, &end) ||
        !PerspectiveCoefficients(StartPoints(in.shape), end, &coefficients)) {
      std::memcpy(out.data, in.data, in.shape.bytes());  // Not applied, or a 1-pixel side.
      return absl::OkStatus();
    }
    PerspectiveWarp(in, coefficients, warp_.bilinear,
                    warp_.fill.empty() ? nullptr : warp_.fill.data(), out);
    return absl::OkStatus();
  }

  // Nothing when not applied (or degenerate: Apply copies).
  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    std::array<double, 8> end;
    std::array<double, 8> coefficients;
    if (!Draw(in, rng, &end) || !PerspectiveCoefficients(StartPoints(in), end, &coefficients)) {
      return;
    }
    moves->push_back(PerspectiveMove(in.height, in.width, coefficients));
  }

  // [0] when not applied, else [1, then the end points: top-left x, y, top-right x, y,
  // bottom-right x, y, bottom-left x, y] (get_params' endpoints).
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    std::array<double, 8> end;
    if (!Draw(in, rng, &end)) return {0.0};
    std::vector<double> params = {1.0};
    params.insert(params.end(), end.begin(), end.end());
    return params;
  }

 private:
  // torchvision's startpoints: the corners, clockwise from the top-left.
  static std::array<double, 8> StartPoints(const ImageShape& s) {
    const double w = s.width - 1.0, h = s.height - 1.0;
    return {0, 0, w, 0, w, h, 0, h};
  }

  // One rng->UniformFloat(); when < p, RandomPerspective.get_params' eight torch.randint draws
  // in its order (randint(lo, hi) = lo + rng->UniformInt(hi - lo)). Returns whether applied.
  bool Draw(const ImageShape& s, CounterRng* rng, std::array<double, 8>* end) const {
    if (!(rng->UniformFloat() < p_)) return false;
    const int64_t w = s.width, h = s.height;
    const int64_t dx = static_cast<int64_t>(static_cast<double>(distortion_scale_) * (w / 2));
    const int64_t dy = static_cast<int64_t>(static_cast<double>(distortion_scale_) * (h / 2));
    auto randint = [rng](int64_t lo, int64_t hi) {
      return static_cast<double>(lo + static_cast<int64_t>(rng->UniformInt(hi - lo)));
    };
    (*end)[0] = randint(0, dx + 1);  // top-left
    (*end)[1] = randint(0, dy + 1);
    (*end)[2] = randint(w - dx - 1, w);  // top-right
    (*end)[3] = randint(0, dy + 1);
    (*end)[4] = randint(w - dx - 1, w);  // bottom-right
    (*end)[5] = randint(h - dy - 1, h);
    (*end)[6] = randint(0, dx + 1);  // bottom-left
    (*end)[7] = randint(h - dy - 1, h);
    return true;
  }

  const float distortion_scale_;
  const float p_;
  const WarpArgs warp_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateRandomPerspectiveOp(const v1::Op& op,
                                                              const ImageShape& input) {
  const v1::RandomPerspectiveOp& a = op.random_perspective();
  const float scale = a.has_distortion_scale() ? a.distortion_scale() : 0.5f;
  if (!(scale >= 0.0f && scale <= 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("distortion_scale must be in [0, 1], got ", scale));
  }
  const float p = a.has_p() ? a.p() : 0.5f;
  if (!(p >= 0.0f && p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", p));
  }
  ASSIGN_OR_RETURN(WarpArgs warp,
                   ParseWarpArgs(a.has_bilinear() ? a.bilinear() : 1, a.fill(), input));
  if (warp.fill.empty()) warp.fill.assign(input.channels, 0.0f);  // torchvision's fill=0
  return std::make_unique<RandomPerspectiveOp>(input, scale, p, std::move(warp));
}

}  // namespace

OpSchema RandomPerspectiveOpSchema() {
  return OpSchema{
      "random_perspective",
      v1::Op::kRandomPerspective,
      "torchvision RandomPerspective on tensors: with probability p, each corner moves inwards "
      "by up to distortion_scale × half the width and height, and the image is warped through "
      "the perspective mapping them back (same size out). Images 1 pixel wide or high are "
      "copied.",
      {{"distortion_scale", ArgType::kFloat, "0.5", "In [0, 1].", Closed(0, 1)},
       {"p", ArgType::kFloat, "0.5", "Probability in [0, 1].", Closed(0, 1)},
       {"bilinear", ArgType::kInt, "1", "0 nearest, 1 bilinear (torchvision's default)."},
       {"fill", ArgType::kFloatList, "[]",
        "Empty (0, as torchvision), 1 value or one per channel."}},
      &CreateRandomPerspectiveOp,
      {"`RandomPerspective` on tensors (`get_params`, then `F.perspective`)", "uint8, float32",
       "given its coefficients: nearest exact, bilinear uint8 ≤ 1, float ≤ 1e-4 (torchvision's "
       "float32 solve is within 1e-3 of them); end points: χ²"},
      TargetSupport::kMoves,
      RngDraws::kAlways};
}

}  // namespace stoker
