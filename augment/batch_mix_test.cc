// The batch-level stage: validation, text forms, the draws (documented order, lambda's
// distribution against Beta(alpha, alpha) by a KS test with a negative control), soft labels.
#include "augment/batch_mix.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

constexpr ImageShape kImage{24, 32, 3, PixelType::kFloat32};

pb::BatchMixOp MixSpec(float mixup_alpha, float cutmix_alpha, uint32_t num_classes = 10) {
  pb::BatchMixOp spec;
  spec.set_num_classes(num_classes);
  spec.set_mixup_alpha(mixup_alpha);
  spec.set_cutmix_alpha(cutmix_alpha);
  return spec;
}

BatchMix Create(const pb::BatchMixOp& spec) {
  auto mix = BatchMix::Create(spec, kImage, pb::DTYPE_FLOAT32, pb::LAYOUT_CHW);
  EXPECT_TRUE(mix.ok()) << mix.status();
  return *std::move(mix);
}

void ExpectInvalid(const pb::BatchMixOp& spec, const std::string& message,
                   pb::DType dtype = pb::DTYPE_FLOAT32) {
  auto mix = BatchMix::Create(spec, kImage, dtype, pb::LAYOUT_HWC);
  EXPECT_EQ(mix.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mix.status().message(), HasSubstr(message));
}

TEST(BatchMixCreateTest, ErrorsNameTheField) {
  ExpectInvalid(MixSpec(0.2f, 0, 0), "pipeline.batch_mix.num_classes: must be > 0");
  ExpectInvalid(MixSpec(0, 0), "pipeline.batch_mix.mixup_alpha: mixup_alpha or cutmix_alpha");
  ExpectInvalid(MixSpec(-1, 0), "pipeline.batch_mix.mixup_alpha: must be >= 0, got -1");
  ExpectInvalid(MixSpec(0, NAN), "pipeline.batch_mix.cutmix_alpha: must be >= 0");
  pb::BatchMixOp spec = MixSpec(0.2f, 1.0f);
  spec.set_switch_prob(1.5f);
  ExpectInvalid(spec, "pipeline.batch_mix.switch_prob: must be in [0, 1], got 1.5");
  spec = MixSpec(0.2f, 1.0f);
  spec.set_p(-0.1f);
  ExpectInvalid(spec, "pipeline.batch_mix.p: must be in [0, 1]");
  ExpectInvalid(MixSpec(0.2f, 0), "need a uint8 or float32 output", pb::DTYPE_UNSPECIFIED);
}

// I_x(a, b), the Beta(a, b) CDF: the continued fraction of Numerical Recipes (betacf, Lentz).
double BetaCdf(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - BetaCdf(1 - x, b, a);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log(1 - x)) /
                       a;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < 1e-300 ? 1e-300 : d);
  double f = d;
  for (int m = 1; m < 500; ++m) {
    for (int odd = 0; odd < 2; ++odd) {
      const double num = odd == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                  : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      d = 1 / (std::abs(d) < 1e-300 ? 1e-300 : d);
      c = 1 + num / c;
      if (std::abs(c) < 1e-300) c = 1e-300;
      f *= c * d;
    }
  }
  return front * f;
}

// The Kolmogorov-Smirnov statistic of `samples` against Beta(alpha, alpha).
double KsStatistic(std::vector<double> samples, double alpha) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double cdf = BetaCdf(samples[i], alpha, alpha);
    d = std::max({d, (i + 1) / n - cdf, cdf - i / n});
  }
  return d;
}

TEST(BatchMixDrawTest, MixupLambdaIsBetaDistributed) {
  constexpr int kDraws = 10000;
  // KS critical value at significance 0.001: 1.949 / sqrt(n).
  const double critical = 1.949 / std::sqrt(static_cast<double>(kDraws));
  for (float alpha : {0.2f, 0.8f, 1.0f, 4.0f}) {
    const BatchMix mix = Create(MixSpec(alpha, 0));
    std::vector<double> lams;
    for (uint64_t batch = 0; batch < kDraws; ++batch) {
      CounterRng rng = BatchRng(/*seed=*/5, /*epoch=*/0, batch);
      const BatchMixParams params = mix.Draw(&rng);
      ASSERT_EQ(params.kind, BatchMixParams::Kind::kMixup);
      lams.push_back(params.lam);
    }
    EXPECT_LT(KsStatistic(lams, alpha), critical) << "alpha " << alpha;
    // Negative control: the same draws are far from a wrong alpha.
    EXPECT_GT(KsStatistic(lams, alpha * 1.5), critical) << "alpha " << alpha;
  }
}

TEST(BatchMixDrawTest, FollowsTheDocumentedDrawsAndTorchvisionBox) {
  const BatchMix mix = Create(MixSpec(0, 1.0f));
  for (uint64_t batch = 0; batch < 200; ++batch) {
    CounterRng rng = BatchRng(3, 1, batch);
    CounterRng replay = rng;
    const BatchMixParams params = mix.Draw(&rng);
    replay.UniformDouble();  // apply (p = 1)
    const double lam = DrawBetaSymmetric(1.0, &replay);
    const uint32_t r_x = static_cast<uint32_t>(replay.UniformInt(32));
    const uint32_t r_y = static_cast<uint32_t>(replay.UniformInt(24));
    // torchvision: r = 0.5 sqrt(1 - lam); x1 = clamp(r_x - int(r W), 0), x2 = clamp(r_x +
    // int(r W), W); the same for y; lam = 1 - box area / image area.
    const double r = 0.5 * std::sqrt(1.0 - lam);
    const int x1 = std::max(0, static_cast<int>(r_x) - static_cast<int>(r * 32));
    const int x2 = std::min(32, static_cast<int>(r_x) + static_cast<int>(r * 32));
    const int y1 = std::max(0, static_cast<int>(r_y) - static_cast<int>(r * 24));
    const int y2 = std::min(24, static_cast<int>(r_y) + static_cast<int>(r * 24));
    ASSERT_EQ(params.kind, BatchMixParams::Kind::kCutmix);
    EXPECT_EQ(params.box.left, static_cast<uint32_t>(x1));
    EXPECT_EQ(params.box.top, static_cast<uint32_t>(y1));
    EXPECT_EQ(params.box.width, static_cast<uint32_t>(x2 - x1));
    EXPECT_EQ(params.box.height, static_cast<uint32_t>(y2 - y1));
    EXPECT_DOUBLE_EQ(params.lam, 1.0 - (x2 - x1) * (y2 - y1) / (32.0 * 24.0));
    EXPECT_EQ(rng.counter(), replay.counter());
  }
}

TEST(BatchMixDrawTest, SwitchAndApplyProbabilities) {
  pb::BatchMixOp spec = MixSpec(0.8f, 1.0f);
  spec.set_switch_prob(0.25f);
  spec.set_p(0.6f);
  const BatchMix mix = Create(spec);
  int none = 0, cutmix = 0;
  constexpr int kDraws = 10000;
  for (uint64_t batch = 0; batch < kDraws; ++batch) {
    CounterRng rng = BatchRng(9, 2, batch);
    const BatchMixParams params = mix.Draw(&rng);
    none += params.kind == BatchMixParams::Kind::kNone;
    cutmix += params.kind == BatchMixParams::Kind::kCutmix;
  }
  // Binomial: 5 standard deviations (0.005 * 10000 = 49 at p = 0.4; 42 for 0.15).
  EXPECT_NEAR(none, 0.4 * kDraws, 250);
  EXPECT_NEAR(cutmix, 0.6 * 0.25 * kDraws, 220);
}

TEST(BatchMixApplyTest, SoftLabelsSumToOneAndBadLabelsAreRefused) {
  const BatchMix mix = Create(MixSpec(0.4f, 1.0f, 5));
  std::vector<float> batch(6 * kImage.elements(), 0.5f);
  const std::vector<int64_t> labels = {0, 4, 2, 2, 1, 3};
  std::vector<float> soft(6 * 5);
  ImageBuffer scratch;
  for (uint64_t b = 0; b < 50; ++b) {
    CounterRng rng = BatchRng(1, 0, b);
    ASSERT_TRUE(mix.Apply(mix.Draw(&rng), reinterpret_cast<uint8_t*>(batch.data()), labels,
                          &scratch, soft.data())
                    .ok());
    for (int i = 0; i < 6; ++i) {
      double sum = 0;
      for (int c = 0; c < 5; ++c) sum += soft[i * 5 + c];
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
  const BatchMixParams none;  // kind none: one-hot
  ASSERT_TRUE(
      mix.Apply(none, reinterpret_cast<uint8_t*>(batch.data()), labels, &scratch, soft.data())
          .ok());
  EXPECT_EQ(soft[1 * 5 + 4], 1.0f);
  const std::vector<int64_t> bad = {0, 5};
  const absl::Status status =
      mix.Apply(none, reinterpret_cast<uint8_t*>(batch.data()), bad, &scratch, soft.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("sample 1 of the batch has label 5, outside [0, 5)"));
}

TEST(BatchMixTextTest, TextFormsFillBatchMix) {
  auto spec =
      ParsePipelineText("to_float, mixup(alpha=0.2, num_classes=10), cutmix(num_classes=10)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->ops_size(), 1);
  EXPECT_EQ(spec->batch_mix().num_classes(), 10u);
  EXPECT_FLOAT_EQ(spec->batch_mix().mixup_alpha(), 0.2f);
  EXPECT_FLOAT_EQ(spec->batch_mix().cutmix_alpha(), 1.0f);
  EXPECT_FALSE(spec->batch_mix().has_switch_prob());

  spec = ParsePipelineText("to_float, mixup_cutmix(num_classes=1000, p=0.5)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FLOAT_EQ(spec->batch_mix().mixup_alpha(), 0.8f);
  EXPECT_FLOAT_EQ(spec->batch_mix().cutmix_alpha(), 1.0f);
  EXPECT_FLOAT_EQ(spec->batch_mix().switch_prob(), 0.5f);
  EXPECT_FLOAT_EQ(spec->batch_mix().p(), 0.5f);

  auto pipeline = Pipeline::Compile(*spec, ImageShape{8, 8, 3, PixelType::kUint8});
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  ASSERT_NE(pipeline->batch_mix(), nullptr);
  EXPECT_EQ(pipeline->batch_mix()->num_classes(), 1000u);
}

TEST(BatchMixTextTest, TextErrors) {
  auto error = [](std::string_view text) { return ParsePipelineText(text).status(); };
  EXPECT_THAT(error("mixup(alpha=0.2), to_float").message(),
              HasSubstr("column 1: mixup.num_classes is required"));
  EXPECT_THAT(error("mixup(alpha=0.2, num_classes=3), to_float").message(),
              HasSubstr("column 34: to_float follows the batch-level op mixup; batch-level ops "
                        "(mixup, cutmix) come last"));
  EXPECT_THAT(error("mixup(num_classes=3), cutmix(num_classes=4)").message(),
              HasSubstr("cutmix.num_classes: batch_mix.num_classes was already set by mixup"));
  EXPECT_THAT(
      error("mixup(num_classes=3), mixup_cutmix(num_classes=3)").message(),
      HasSubstr("mixup_cutmix.mixup_alpha: batch_mix.mixup_alpha was already set by mixup"));
  EXPECT_THAT(error("cutmix(beta=1, num_classes=3)").message(),
              HasSubstr("cutmix has no argument 'beta'; its arguments: alpha, num_classes"));
  EXPECT_EQ(error("mixup(num_classes=3)*2").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(error("to_float, random_apply(ops=[mixup(num_classes=3)])").message(),
              HasSubstr("mixup is batch-level: it cannot be in an op list"));
}

}  // namespace
}  // namespace stoker
