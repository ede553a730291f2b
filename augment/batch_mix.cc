#include "augment/batch_mix.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace stoker {
namespace {

absl::Status FieldError(const char* field, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("pipeline.batch_mix.", field, ": ", message));
}

absl::Status CheckProbability(const char* field, float value) {
  if (!(value >= 0.0f && value <= 1.0f)) {
    return FieldError(field, absl::StrCat("must be in [0, 1], got ", value));
  }
  return absl::OkStatus();
}

// (0, 1]: never 0, so log() and pow() stay finite.
double OpenUniform(CounterRng* rng) { return 1.0 - rng->UniformDouble(); }

double StandardNormal(CounterRng* rng) {
  const double u1 = OpenUniform(rng);
  const double u2 = rng->UniformDouble();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Gamma(shape, 1) by Marsaglia and Tsang (2000). REQUIRES: shape >= 1.
double DrawGammaAtLeastOne(double shape, CounterRng* rng) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = StandardNormal(rng);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = OpenUniform(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double DrawGamma(double shape, CounterRng* rng) {
  if (shape >= 1.0) return DrawGammaAtLeastOne(shape, rng);
  const double g = DrawGammaAtLeastOne(shape + 1.0, rng);
  return g * std::pow(OpenUniform(rng), 1.0 / shape);
}

}  // namespace

PixelRect CutmixBox(double lam, uint32_t r_x, uint32_t r_y, uint32_t height, uint32_t width) {
  const double r = 0.5 * std::sqrt(1.0 - lam);
  const int64_t r_w_half = static_cast<int64_t>(r * width);
  const int64_t r_h_half = static_cast<int64_t>(r * height);
  const int64_t x1 = std::max<int64_t>(r_x - r_w_half, 0);
  const int64_t y1 = std::max<int64_t>(r_y - r_h_half, 0);
  const int64_t x2 = std::min<int64_t>(r_x + r_w_half, width);
  const int64_t y2 = std::min<int64_t>(r_y + r_h_half, height);
  return PixelRect{static_cast<uint32_t>(y1), static_cast<uint32_t>(x1),
                   static_cast<uint32_t>(y2 - y1), static_cast<uint32_t>(x2 - x1)};
}

const std::vector<OpSchema>& BatchOpSchemas() {
  static const auto* const kSchemas = new std::vector<OpSchema>{
      {"mixup",
       stoker::v1::Op::OP_NOT_SET,
       "torchvision v2 MixUp, batch-level (after every per-sample op, listed last): sample i "
       "becomes lam * x[i] + (1 - lam) * x[i-1] (x[-1] the last sample), lam ~ Beta(alpha, alpha) "
       "per batch; labels become soft, num_classes floats per sample. uint8 output is rounded.",
       {{"alpha", ArgType::kFloat, "1.0", "Beta parameter, > 0.", Above(0)},
        {"num_classes", ArgType::kInt, "", "Classes of the one-hot labels, > 0.", AtLeast(1)}},
       nullptr,
       {"v2 `MixUp(alpha, num_classes)`", "uint8, float32 (the batch's output)",
        "float32 within 1e-6 of torchvision's formula (`python_batch_mix_test`); lam: KS against "
        "Beta(alpha, alpha) (`batch_mix_test`)"},
       TargetSupport::kRefused,
       RngDraws::kAlways},
      {"cutmix",
       stoker::v1::Op::OP_NOT_SET,
       "torchvision v2 CutMix, batch-level: a box of x[i-1] pasted into x[i], its area from "
       "lam ~ Beta(alpha, alpha), labels weighted by the box's area. With mixup too, each batch "
       "uses one of them (timm's switch, switch_prob 0.5).",
       {{"alpha", ArgType::kFloat, "1.0", "Beta parameter, > 0.", Above(0)},
        {"num_classes", ArgType::kInt, "", "Classes of the one-hot labels, > 0.", AtLeast(1)}},
       nullptr,
       {"v2 `CutMix(alpha, num_classes)`", "uint8, float32 (the batch's output)",
        "box and lam as torchvision's (`python_batch_mix_test`, `batch_mix_test`)"},
       TargetSupport::kRefused,
       RngDraws::kAlways},
      {"mixup_cutmix",
       stoker::v1::Op::OP_NOT_SET,
       "timm's Mixup (mode='batch', no label smoothing): with probability p a batch is mixed, "
       "by CutMix with probability switch_prob, else by MixUp. Defaults are DeiT's.",
       {{"mixup_alpha", ArgType::kFloat, "0.8", "MixUp's Beta parameter; 0 disables MixUp.",
         AtLeast(0)},
        {"cutmix_alpha", ArgType::kFloat, "1.0", "CutMix's Beta parameter; 0 disables CutMix.",
         AtLeast(0)},
        {"switch_prob", ArgType::kFloat, "0.5", "Probability of CutMix when both are enabled.",
         Closed(0, 1)},
        {"p", ArgType::kFloat, "1.0", "Probability that a batch is mixed at all.", Closed(0, 1)},
        {"num_classes", ArgType::kInt, "", "Classes of the one-hot labels, > 0.", AtLeast(1)}},
       nullptr,
       {"timm `Mixup(mixup_alpha, cutmix_alpha, prob=p, switch_prob, mode=\"batch\", "
        "label_smoothing=0)` (DeiT's defaults)",
        "uint8, float32 (the batch's output)", "switch and apply probabilities (`batch_mix_test`)"},
       TargetSupport::kRefused,
       RngDraws::kAlways},
  };
  return *kSchemas;
}

const OpSchema* FindBatchOpSchema(std::string_view name) {
  for (const OpSchema& schema : BatchOpSchemas()) {
    if (schema.name == name) return &schema;
  }
  return nullptr;
}

std::string KnownBatchOpNames() {
  return absl::StrJoin(BatchOpSchemas(), ", ",
                       [](std::string* out, const OpSchema& schema) { out->append(schema.name); });
}

std::string BatchMixField(std::string_view op, std::string_view arg) {
  if (arg == "alpha" && (op == "mixup" || op == "cutmix")) return std::string(op) + "_alpha";
  return std::string(arg);
}

CounterRng BatchRng(uint64_t seed, uint32_t epoch, uint64_t batch_index) {
  return CounterRng(KeyOf(seed ^ kBatchMixDomain, epoch, batch_index));
}

double DrawBetaSymmetric(double alpha, CounterRng* rng) {
  const double g1 = DrawGamma(alpha, rng);
  const double g2 = DrawGamma(alpha, rng);
  return g1 / (g1 + g2);
}

absl::StatusOr<BatchMix> BatchMix::Create(const stoker::v1::BatchMixOp& spec,
                                          const ImageShape& image, stoker::v1::DType dtype,
                                          stoker::v1::Layout layout) {
  if (spec.num_classes() == 0) return FieldError("num_classes", "must be > 0");
  if (!(spec.mixup_alpha() >= 0.0f) || !std::isfinite(spec.mixup_alpha())) {
    return FieldError("mixup_alpha", absl::StrCat("must be >= 0, got ", spec.mixup_alpha()));
  }
  if (!(spec.cutmix_alpha() >= 0.0f) || !std::isfinite(spec.cutmix_alpha())) {
    return FieldError("cutmix_alpha", absl::StrCat("must be >= 0, got ", spec.cutmix_alpha()));
  }
  if (spec.mixup_alpha() == 0.0f && spec.cutmix_alpha() == 0.0f) {
    return FieldError("mixup_alpha",
                      "mixup_alpha or cutmix_alpha must be > 0 (both 0 mixes nothing)");
  }
  if (spec.has_switch_prob()) {
    if (absl::Status status = CheckProbability("switch_prob", spec.switch_prob()); !status.ok()) {
      return status;
    }
  }
  if (spec.has_p()) {
    if (absl::Status status = CheckProbability("p", spec.p()); !status.ok()) return status;
  }
  if (dtype != stoker::v1::DTYPE_UINT8 && dtype != stoker::v1::DTYPE_FLOAT32) {
    return FieldError("num_classes", absl::StrCat("MixUp/CutMix need a uint8 or float32 output, "
                                                  "the pipeline's output dtype is ",
                                                  stoker::v1::DType_Name(dtype)));
  }
  BatchMix mix;
  mix.num_classes_ = spec.num_classes();
  mix.mixup_alpha_ = spec.mixup_alpha();
  mix.cutmix_alpha_ = spec.cutmix_alpha();
  mix.switch_prob_ = spec.has_switch_prob() ? spec.switch_prob() : 0.5;
  mix.p_ = spec.has_p() ? spec.p() : 1.0;
  mix.image_ =
      ImageShape{image.height, image.width, image.channels,
                 dtype == stoker::v1::DTYPE_UINT8 ? PixelType::kUint8 : PixelType::kFloat32};
  mix.chw_ = layout == stoker::v1::LAYOUT_CHW;
  return mix;
}

BatchMixParams BatchMix::Draw(CounterRng* rng) const {
  BatchMixParams params;
  const bool apply = rng->UniformDouble() < p_;
  bool cutmix = mixup_alpha_ == 0.0;
  if (mixup_alpha_ > 0.0 && cutmix_alpha_ > 0.0) cutmix = rng->UniformDouble() < switch_prob_;
  if (!apply) return params;
  params.kind = cutmix ? BatchMixParams::Kind::kCutmix : BatchMixParams::Kind::kMixup;
  params.lam = DrawBetaSymmetric(cutmix ? cutmix_alpha_ : mixup_alpha_, rng);
  if (!cutmix) return params;
  const uint32_t r_x = static_cast<uint32_t>(rng->UniformInt(image_.width));
  const uint32_t r_y = static_cast<uint32_t>(rng->UniformInt(image_.height));
  params.box = CutmixBox(params.lam, r_x, r_y, image_.height, image_.width);
  params.lam = 1.0 - static_cast<double>(params.box.height) * params.box.width /
                         (static_cast<double>(image_.height) * image_.width);
  return params;
}

absl::Status BatchMix::Apply(const BatchMixParams& params, uint8_t* batch,
                             absl::Span<const int64_t> labels, ImageBuffer* scratch,
                             float* soft_labels) const {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= num_classes_) {
      return FieldError("num_classes",
                        absl::StrCat("sample ", i, " of the batch has label ", labels[i],
                                     ", outside [0, ", num_classes_, ")"));
    }
  }
  const BatchTensorView view{batch, labels.size(), image_, chw_};
  switch (params.kind) {
    case BatchMixParams::Kind::kNone:
      break;
    case BatchMixParams::Kind::kMixup:
      MixupBatch(view, params.lam, scratch);
      break;
    case BatchMixParams::Kind::kCutmix:
      CutmixBatch(view, params.box, scratch);
      break;
  }
  MixLabels(labels, num_classes_, params.kind == BatchMixParams::Kind::kNone ? 1.0 : params.lam,
            soft_labels);
  return absl::OkStatus();
}

}  // namespace stoker
