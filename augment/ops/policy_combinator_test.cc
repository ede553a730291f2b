// The combinators (random_apply, random_choice, random_order), the policies (rand_augment,
// trivial_augment_wide, auto_augment, aug_mix) and random_perspective through the pipeline:
// validation errors name the field, draws are per sample, the parameter hook draws what Apply
// draws. Equivalence with torchvision and the distributions are tested in
// tests/python/augment_policy_test.py.

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "augment/kernels/policy.h"
#include "augment/op_params.h"
#include "augment/op_registry.h"
#include "augment/ops/policy_space.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

constexpr ImageShape kShape{23, 31, 3, PixelType::kUint8};

absl::StatusOr<Pipeline> Compile(std::string_view text, const ImageShape& shape = kShape) {
  absl::StatusOr<v1::PipelineSpec> spec = ParsePipelineText(text);
  if (!spec.ok()) return spec.status();
  return Pipeline::Compile(*spec, shape);
}

std::vector<uint8_t> RunText(std::string_view text, const std::vector<uint8_t>& source,
                             uint64_t index, const ImageShape& shape = kShape) {
  absl::StatusOr<Pipeline> pipeline = Compile(text, shape);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  if (!pipeline.ok()) return {};
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  PipelineWorkspace workspace;
  CounterRng rng = SampleRng(3, 0, index);
  std::vector<uint8_t> copy = source;
  const absl::Status status =
      pipeline->Run(ImageView{copy.data(), shape}, &rng, &workspace, out.data());
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

void ExpectCombinatorInvalid(std::string_view text, std::string_view message,
                             const ImageShape& shape = kShape) {
  absl::StatusOr<Pipeline> pipeline = Compile(text, shape);
  EXPECT_EQ(pipeline.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_THAT(std::string(pipeline.status().message()), HasSubstr(std::string(message))) << text;
}

std::vector<uint8_t> Inverted(std::vector<uint8_t> pixels) {
  for (uint8_t& p : pixels) p = static_cast<uint8_t>(255 - p);
  return pixels;
}

TEST(CombinatorTest, ApplyChoiceAndOrderRunTheirOps) {
  const std::vector<uint8_t> image = NaturalImage(kShape.height, kShape.width, 3, 1);
  EXPECT_EQ(RunText("random_apply(ops=[invert(p=1)], p=0)", image, 0), image);
  EXPECT_EQ(RunText("random_apply(ops=[invert(p=1)], p=1)", image, 0), Inverted(image));
  EXPECT_EQ(RunText("random_apply(ops=[invert(p=1), invert(p=1)], p=1)", image, 0), image);
  EXPECT_EQ(RunText("random_choice(ops=[vertical_flip(p=1), invert(p=1)], p=[0, 3])", image, 5),
            Inverted(image));
  EXPECT_EQ(RunText("random_order(ops=[invert(p=1), invert(p=1), invert(p=1)])", image, 2),
            Inverted(image));
  // Nested combinators and policies.
  EXPECT_EQ(RunText("random_apply(ops=[random_choice(ops=[invert(p=1)])], p=1)", image, 0),
            Inverted(image));
  int applied = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    applied += RunText("random_apply(ops=[invert(p=1)], p=0.25)", image, i) != image;
  }
  EXPECT_GT(applied, 25);
  EXPECT_LT(applied, 75);
}

TEST(CombinatorTest, ErrorsNameTheNestedOp) {
  ExpectCombinatorInvalid("random_apply(ops=[])",
                          "pipeline.ops[0] (random_apply): ops: give at least one");
  ExpectCombinatorInvalid(
      "random_apply(ops=[invert, center_crop(height=4, width=4)])",
      "pipeline.ops[0] (random_apply): ops[1] (center_crop): a nested op must keep "
      "the image's shape; it turns 23x31x3 uint8 into 4x4x3 uint8");
  ExpectCombinatorInvalid("random_order(ops=[to_float])",
                          "ops[0] (to_float): a nested op must keep");
  ExpectCombinatorInvalid("random_choice(ops=[posterize(bits=9)])",
                          "ops[0] (posterize): bits must be");
  ExpectCombinatorInvalid("random_choice(ops=[invert, invert], p=[1])",
                          "p takes one weight per op (2)");
  ExpectCombinatorInvalid("random_choice(ops=[invert], p=[0])", "p: the weights sum to 0");
  ExpectCombinatorInvalid("random_choice(ops=[invert], p=[-1])", "p[0] must be >= 0");
  ExpectCombinatorInvalid("random_apply(ops=[invert], p=2)", "p must be in [0, 1], got 2");
  ExpectCombinatorInvalid("random_apply(ops=[decode])", "decode must be the first op");
}

TEST(PolicyTest, ValidatesArguments) {
  ExpectCombinatorInvalid("to_float, rand_augment", "requires uint8 input");
  ExpectCombinatorInvalid("rand_augment(magnitude=31)", "magnitude must be in [0, 30], got 31");
  ExpectCombinatorInvalid("rand_augment(num_magnitude_bins=1)",
                          "num_magnitude_bins must be in [2, 1000]");
  ExpectCombinatorInvalid("rand_augment(bilinear=2)", "bilinear must be 0 or 1");
  ExpectCombinatorInvalid("trivial_augment_wide(fill=[1, 2])",
                          "fill takes 1 value or one per channel");
  ExpectCombinatorInvalid("auto_augment(policy=1)", "policy must be 0 (imagenet");
  ExpectCombinatorInvalid("aug_mix(severity=11)", "severity must be in [1, 10], got 11");
  ExpectCombinatorInvalid("aug_mix(mixture_width=0)", "mixture_width must be in [1, 32]");
  ExpectCombinatorInvalid("aug_mix(alpha=0)", "alpha must be > 0");
  ExpectCombinatorInvalid("rand_augment", "requires 1 or 3 channels",
                          ImageShape{8, 8, 4, PixelType::kUint8});
  ExpectCombinatorInvalid("random_perspective(distortion_scale=1.5)",
                          "distortion_scale must be in [0, 1]");
}

TEST(PolicyTest, DeterministicPerSampleAndDifferentAcrossSamples) {
  const std::vector<uint8_t> image = NaturalImage(kShape.height, kShape.width, 3, 2);
  for (const char* text : {"rand_augment", "trivial_augment_wide", "auto_augment", "aug_mix",
                           "random_perspective(p=1)", "rand_augment(num_ops=0)"}) {
    const std::vector<uint8_t> a = RunText(text, image, 4);
    EXPECT_EQ(a, RunText(text, image, 4)) << text;
    int differs = 0;
    for (uint64_t i = 5; i < 15; ++i) differs += RunText(text, image, i) != a;
    EXPECT_GT(differs, std::string(text) == "rand_augment(num_ops=0)" ? -1 : 3) << text;
  }
  EXPECT_EQ(RunText("rand_augment(num_ops=0)", image, 1), image);
  EXPECT_EQ(RunText("random_perspective(distortion_scale=0, p=1)", image, 1), image);
}

TEST(PolicyTest, GrayImagesWork) {
  const ImageShape gray{9, 7, 1, PixelType::kUint8};
  const std::vector<uint8_t> image = NaturalImage(gray.height, gray.width, 1, 3);
  for (const char* text : {"rand_augment(num_ops=5)", "aug_mix(all_ops=0)", "auto_augment"}) {
    EXPECT_EQ(RunText(text, image, 1, gray).size(), image.size()) << text;
  }
}

TEST(PolicyTest, ParamsHookDrawsWhatApplyDraws) {
  // The hook and Apply consume the same number of draws: a later op sees the same stream. (A
  // combinator's hook makes its own draws only, so its nested ops here draw nothing.)
  for (const char* text :
       {"rand_augment", "trivial_augment_wide", "auto_augment", "aug_mix", "random_perspective",
        "random_apply(ops=[grayscale(channels=3)])",
        "random_choice(ops=[grayscale(channels=3), affine(angle=3)])",
        "random_order(ops=[grayscale(channels=3), affine(angle=3), affine(angle=5)])",
        "horizontal_flip", "random_crop(height=5, width=7)",
        "random_resized_crop(height=5, "
        "width=7)",
        "color_jitter(brightness=0.2, hue=0.1)",
        "random_rotation(degrees_min=-5, "
        "degrees_max=5)",
        "random_affine(degrees_max=3, translate=[0.1, 0.1], scale_min=0.9, "
        "scale_max=1, shear=[1, 2, 3, 4])",
        "random_erasing"}) {
    absl::StatusOr<v1::PipelineSpec> spec = ParsePipelineText(text);
    ASSERT_TRUE(spec.ok());
    absl::StatusOr<std::unique_ptr<Op>> op = CreateOp(spec->ops(0), 0, kShape);
    ASSERT_TRUE(op.ok()) << op.status();
    const std::vector<uint8_t> image = NaturalImage(kShape.height, kShape.width, 3, 4);
    std::vector<uint8_t> out(image.size());
    ImageBuffer scratch;
    for (uint64_t i = 0; i < 20; ++i) {
      CounterRng applied = SampleRng(1, 2, i), drawn = SampleRng(1, 2, i);
      std::vector<uint8_t> copy = image;
      // The op's own output shape: random_crop and random_resized_crop shrink the image.
      ASSERT_TRUE((*op)
                      ->Apply(ImageView{copy.data(), kShape}, &applied, &scratch,
                              ImageView{out.data(), (*op)->output_shape()})
                      .ok());
      ASSERT_TRUE(DrawOpParams(**op, kShape, &drawn).ok());
      EXPECT_EQ(applied.counter(), drawn.counter()) << text << " " << i;
    }
  }
  absl::StatusOr<std::unique_ptr<Op>> invert =
      CreateOp(*ParsePipelineText("to_float").value().mutable_ops(0), 0, kShape);
  ASSERT_TRUE(invert.ok());
  CounterRng rng(1);
  EXPECT_EQ(DrawOpParams(**invert, kShape, &rng).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PolicySpaceTest, MagnitudesAreTorchvisions) {
  // RandAugment's defaults: bin 9 of 31.
  const auto ra = RandAugmentSpace();
  ASSERT_EQ(ra.size(), 14u);
  EXPECT_FLOAT_EQ(PolicyMagnitude(ra[1], 9, 31, 224, 224), 0.09f);    // ShearX
  EXPECT_FLOAT_EQ(PolicyMagnitude(ra[3], 30, 31, 224, 331), 150.0f);  // TranslateX, width 331
  EXPECT_FLOAT_EQ(PolicyMagnitude(ra[5], 9, 31, 224, 224), 9.0f);     // Rotate
  EXPECT_EQ(PolicyMagnitude(ra[10], 9, 31, 224, 224), 7.0);           // Posterize: 8 - round(1.2)
  EXPECT_EQ(PolicyMagnitude(ra[10], 30, 31, 224, 224), 4.0);
  EXPECT_FLOAT_EQ(PolicyMagnitude(ra[11], 9, 31, 224, 224), 178.5f);  // Solarize
  EXPECT_EQ(PolicyMagnitude(TrivialAugmentWideSpace()[10], 30, 31, 1, 1), 2.0);
  EXPECT_EQ(PolicyMagnitude(AugMixSpace(true)[5], 9, 10, 1, 1), 0.0);  // 4 - round(9 / 2.25)
  EXPECT_EQ(AugMixSpace(false).size(), 9u);
  EXPECT_EQ(ImageNetPolicy().size(), 25u);
  EXPECT_STREQ(PolicyOpName(AutoAugmentSpace().back().op), "Invert");
}

TEST(PolicySpaceTest, GammaHasItsMean) {
  CounterRng rng(9);
  for (double alpha : {0.3, 1.0, 4.0}) {
    double sum = 0;
    constexpr int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) sum += SampleGamma(alpha, &rng);
    EXPECT_NEAR(sum / kDraws, alpha, 0.05 * alpha + 0.02) << alpha;
  }
}

}  // namespace
}  // namespace stoker
