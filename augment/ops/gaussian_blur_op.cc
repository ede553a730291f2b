// gaussian_blur: torchvision's GaussianBlur on float32 images, fixed or sampled sigma.

#include <cmath>
#include <memory>
#include <vector>

#include "augment/kernels/gaussian_blur.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// torchvision's GaussianBlur default sigma range.
constexpr float kDefaultSigmaMin = 0.1f;
constexpr float kDefaultSigmaMax = 2.0f;

// Reflect padding needs an image taller and wider than the radius; sizes of 0 vary per sample
// and are checked then.
absl::Status CheckBlurSize(int ksize, const ImageShape& input) {
  const uint32_t radius = static_cast<uint32_t>(ksize / 2);
  if ((input.height != 0 && input.height <= radius) ||
      (input.width != 0 && input.width <= radius)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ksize ", ksize, " needs an image taller and wider than ksize/2 = ", radius,
                     " (reflect padding), got ", input.height, "x", input.width));
  }
  return absl::OkStatus();
}

class GaussianBlurOp final : public Op {
 public:
  // REQUIRES: arguments validated by CreateGaussianBlurOp. `sigma` > 0 means fixed; 0 means
  // drawn per call from [sigma_min, sigma_max).
  GaussianBlurOp(const ImageShape& input, int ksize, float sigma, float sigma_min, float sigma_max)
      : Op("gaussian_blur", input, input),
        ksize_(ksize),
        sigma_min_(sigma_min),
        sigma_max_(sigma_max),
        weights_scratch_floats_((static_cast<size_t>(ksize) + 15) / 16 * 16) {
    if (sigma > 0) {
      fixed_weights_.resize(static_cast<size_t>(ksize));
      GaussianKernel1D(ksize, sigma, fixed_weights_.data());
    }
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    // Scratch: [sampled weights, padded to 16 floats | padded row for the separable passes].
    const size_t floats = weights_scratch_floats_ + GaussianBlurScratchFloats(in.shape, ksize_);
    scratch->Reshape(ImageShape{1, static_cast<uint32_t>(floats), 1, PixelType::kFloat32});
    float* weights_scratch = scratch->view().pixels<float>();
    const float* weights = BlurWeights(rng, weights_scratch);
    GaussianBlur(in, weights, ksize_, weights_scratch + weights_scratch_floats_, out);
    return absl::OkStatus();
  }

  int BlurKsize() const override { return ksize_; }

  bool Draws() const override { return fixed_weights_.empty(); }  // A sigma range draws.

  const float* BlurWeights(CounterRng* rng, float* drawn) const override {
    if (!fixed_weights_.empty()) return fixed_weights_.data();
    GaussianKernel1D(ksize_, rng->UniformFloat(sigma_min_, sigma_max_), drawn);
    return drawn;
  }

  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    RETURN_IF_ERROR(CheckBlurSize(ksize_, in));
    return in;
  }

 private:
  const int ksize_;
  const float sigma_min_;
  const float sigma_max_;
  const size_t weights_scratch_floats_;
  std::vector<float> fixed_weights_;  // Empty when sigma is drawn per call.
};

absl::StatusOr<std::unique_ptr<Op>> CreateGaussianBlurOp(const stoker::v1::Op& op,
                                                         const ImageShape& input) {
  const stoker::v1::GaussianBlurOp& args = op.gaussian_blur();
  const int ksize = args.ksize();
  if (ksize <= 0 || ksize % 2 == 0) {
    return absl::InvalidArgumentError(absl::StrCat("ksize must be odd and > 0, got ", ksize));
  }
  RETURN_IF_ERROR(RequirePixelType(input, PixelType::kFloat32, " (add to_float before it)"));
  RETURN_IF_ERROR(CheckBlurSize(ksize, input));
  const float sigma = args.sigma();
  if (!(sigma >= 0) || !std::isfinite(sigma)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sigma must be > 0, or 0 to draw it from [sigma_min, sigma_max], got ", sigma));
  }
  float sigma_min = args.sigma_min() == 0 ? kDefaultSigmaMin : args.sigma_min();
  float sigma_max = args.sigma_max() == 0 ? kDefaultSigmaMax : args.sigma_max();
  if (sigma == 0) {
    if (!(sigma_min > 0) || !std::isfinite(sigma_min)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sigma_min must be > 0, got ", args.sigma_min()));
    }
    if (!(sigma_max >= sigma_min) || !std::isfinite(sigma_max)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sigma_max must be >= sigma_min (", sigma_min, "), got ", sigma_max,
                       args.sigma_max() == 0 ? " (the default)" : ""));
    }
  }
  return std::make_unique<GaussianBlurOp>(input, ksize, sigma, sigma_min, sigma_max);
}

}  // namespace

OpSchema GaussianBlurOpSchema() {
  return OpSchema{
      "gaussian_blur",
      stoker::v1::Op::kGaussianBlur,
      "Gaussian blur like torchvision's GaussianBlur: normalized kernel exp(-x^2/2sigma^2) of "
      "ksize taps along each axis, reflect padding (...cba|abcd|dcb...). sigma fixed, or when 0 "
      "drawn per image uniformly from [sigma_min, sigma_max). Requires float32 input and an "
      "image taller and wider than ksize/2.",
      {
          {"ksize", ArgType::kInt, "", "Kernel size, odd and > 0.", AtLeast(1)},
          {"sigma", ArgType::kFloat, "0", "Fixed sigma (> 0); 0 draws it per image.", AtLeast(0)},
          // 0 is the proto's unset value: the default, so the range starts at 0.
          {"sigma_min", ArgType::kFloat, "0.1", "Lower end of the sigma range (> 0).", AtLeast(0)},
          {"sigma_max", ArgType::kFloat, "2.0", "Upper end of the sigma range (>= sigma_min)."},
      },
      &CreateGaussianBlurOp,
      {"`GaussianBlur`", "float32", "≤ 1e-4 (gaussian_blur_reference_test)"},
      TargetSupport::kUnchanged,
      RngDraws::kByArgs};
}

}  // namespace stoker
