// The target types' checks and format converters, sanitize, and the pipeline's refusals.

#include "augment/targets/targets.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "augment/pipeline.h"
#include "augment/targets/move_targets.h"
#include "augment/testing/spec_from_text.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two boxes on a 20 x 30 canvas with labels, instance masks and one keypoint each.
SampleTargets TwoBoxes() {
  SampleTargets t;
  t.canvas_height = 20;
  t.canvas_width = 30;
  t.boxes = std::vector<float>{2, 3, 12, 10, 20, 5, 29, 19};
  t.box_labels = std::vector<int64_t>{7, 9};
  t.masks = TargetMasks{2, 20, 30, std::vector<uint8_t>(2 * 20 * 30, 0)};
  t.keypoints = TargetKeypoints{2, 1, {5, 5, 25, 10}, {2, 1}};
  return t;
}

absl::Status InvalidWith(void (*edit)(SampleTargets*)) {
  SampleTargets t = TwoBoxes();
  edit(&t);
  return ValidateTargets(t);
}

void ExpectInvalid(const absl::Status& status, const char* message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(message));
}

TEST(TargetsTest, ValidTargetsPass) { EXPECT_TRUE(ValidateTargets(TwoBoxes()).ok()); }

TEST(TargetsTest, ChecksNameTheField) {
  ExpectInvalid(InvalidWith([](SampleTargets* t) { t->canvas_width = 0; }),
                "targets.canvas_size must be > 0");
  ExpectInvalid(InvalidWith([](SampleTargets* t) { t->boxes->push_back(1); }),
                "targets.boxes holds 9 values, not N x 4");
  ExpectInvalid(InvalidWith([](SampleTargets* t) {
                  (*t->boxes)[5] = std::numeric_limits<float>::quiet_NaN();
                }),
                "targets.boxes[1] has a NaN or infinite coordinate");
  ExpectInvalid(InvalidWith([](SampleTargets* t) { (*t->boxes)[2] = 1; }),
                "targets.boxes[0] has x2 < x1");
  ExpectInvalid(InvalidWith([](SampleTargets* t) { t->box_labels->pop_back(); }),
                "targets.box_labels has 1 entries for 2 boxes");
  ExpectInvalid(InvalidWith([](SampleTargets* t) { t->masks->height = 10; }),
                "targets.masks are 10x30, the canvas is 20x30");
  ExpectInvalid(InvalidWith([](SampleTargets* t) { t->masks->pixels.pop_back(); }),
                "targets.masks hold 1199 bytes");
  ExpectInvalid(InvalidWith([](SampleTargets* t) {
                  t->masks->count = 1;
                  t->masks->pixels.resize(600);
                }),
                "targets.masks hold 1 instance masks for 2 boxes");
  ExpectInvalid(InvalidWith([](SampleTargets* t) {
                  t->keypoints->count = 1;
                  t->keypoints->xy.resize(2);
                  t->keypoints->visibility.resize(1);
                }),
                "targets.keypoints have 1 instances for 2 boxes");
  ExpectInvalid(InvalidWith([](SampleTargets* t) { t->keypoints->visibility.pop_back(); }),
                "targets.keypoints hold 4 coordinates and 1 visibility flags");
}

TEST(TargetsTest, ASemanticMaskIsNotTiedToTheBoxes) {
  SampleTargets t = TwoBoxes();
  t.semantic_mask = TargetMasks{1, 20, 30, std::vector<uint8_t>(600, 3)};
  EXPECT_TRUE(ValidateTargets(t).ok());
  t.semantic_mask->count = 2;
  t.semantic_mask->pixels.resize(1200);
  ExpectInvalid(ValidateTargets(t), "targets.semantic_mask is 2 masks, not one");
  t.semantic_mask = TargetMasks{1, 20, 20, std::vector<uint8_t>(400, 3)};
  ExpectInvalid(ValidateTargets(t), "targets.semantic_mask are 20x20, the canvas is 20x30");
}

TEST(TargetsTest, FormatsConvertBothWays) {
  const std::vector<float> xyxy = {2, 3, 12, 10};
  EXPECT_THAT(BoxesFromXyxy(xyxy, BoxFormat::kXywh), ElementsAre(2, 3, 10, 7));
  EXPECT_THAT(BoxesFromXyxy(xyxy, BoxFormat::kCxcywh), ElementsAre(7, 6.5, 10, 7));
  EXPECT_THAT(BoxesToXyxy(std::vector<float>{2, 3, 10, 7}, BoxFormat::kXywh),
              ElementsAre(2, 3, 12, 10));
  EXPECT_THAT(BoxesToXyxy(std::vector<float>{7, 6.5, 10, 7}, BoxFormat::kCxcywh),
              ElementsAre(2, 3, 12, 10));
  EXPECT_EQ(BoxesToXyxy(xyxy, BoxFormat::kXyxy), xyxy);
}

TEST(TargetsTest, BoxesFollowV2Kernels) {
  SampleTargets t = TwoBoxes();
  // hflip mirrors boxes about the edge (30 - x) and keypoints about the last pixel (29 - x).
  ASSERT_TRUE(MoveTargets({FlipMove(true, 20, 30)}, &t).ok());
  EXPECT_THAT(*t.boxes, ElementsAre(18, 3, 28, 10, 1, 5, 10, 19));
  EXPECT_THAT(t.keypoints->xy, ElementsAre(24, 5, 4, 10));
  // A crop clamps to the window; resize scales by out / in.
  ASSERT_TRUE(MoveTargets({CropMove(20, 30, 4, 5, 10, 20), ResizeMove(10, 20, 20, 10)}, &t).ok());
  EXPECT_THAT(*t.boxes, ElementsAre(6.5, 0, 10, 12, 0, 2, 2.5, 20));
  EXPECT_EQ(t.canvas_height, 20u);
  EXPECT_EQ(t.canvas_width, 10u);
}

TEST(TargetsTest, SanitizeDropsSmallBoxesWithTheirLabelsMasksAndKeypoints) {
  SampleTargets t = TwoBoxes();
  (*t.masks).pixels[600] = 1;  // mark the second box's mask
  // The crop leaves the first box 2 pixels wide, the second 9.
  ASSERT_TRUE(MoveTargets({CropMove(20, 30, 0, 10, 20, 20), SanitizeMove(20, 20, 3)}, &t).ok());
  EXPECT_THAT(*t.boxes, ElementsAre(10, 5, 19, 19));
  EXPECT_THAT(*t.box_labels, ElementsAre(9));
  EXPECT_EQ(t.masks->count, 1u);
  EXPECT_EQ(t.masks->pixels.size(), 20u * 20u);
  EXPECT_EQ(t.keypoints->count, 1u);
  EXPECT_THAT(t.keypoints->xy, ElementsAre(15, 10));
  EXPECT_THAT(t.keypoints->visibility, ElementsAre(1));
}

TEST(TargetsTest, SanitizeBoxesOpDropsThroughThePipeline) {
  PipelineOptions options;
  options.with_targets = true;
  const ImageShape shape{20, 30, 1, PixelType::kUint8};
  absl::StatusOr<Pipeline> pipeline = Pipeline::Compile(
      SpecFromText("center_crop(height=20, width=22), sanitize_boxes(min_size=7)"),
      InputFormat::Decoded(shape), options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  std::vector<uint8_t> image(shape.elements(), 0), out(pipeline->output_bytes_per_sample());
  PipelineWorkspace workspace;
  SampleTargets t = TwoBoxes();
  CounterRng rng(1);
  ASSERT_TRUE(pipeline
                  ->RunWithTargets(SampleInput::Decoded(ImageView{image.data(), shape}), &rng,
                                   &workspace, out.data(), &t)
                  .ok());
  // The crop (left 4) leaves the first box 8 x 7 pixels, the second 6 x 14.
  EXPECT_THAT(*t.box_labels, ElementsAre(7));
  EXPECT_THAT(*t.boxes, ElementsAre(0, 3, 8, 10));
}

absl::Status CompileWithTargets(const char* ops) {
  PipelineOptions options;
  options.with_targets = true;
  return Pipeline::Compile(SpecFromText(ops), InputFormat::Decoded({32, 32, 3, PixelType::kUint8}),
                           options)
      .status();
}

TEST(TargetsTest, PipelinesThatCannotMoveTargetsAreRefused) {
  EXPECT_EQ(CompileWithTargets("horizontal_flip, rand_augment"),
            absl::InvalidArgumentError("pipeline.ops[1] (rand_augment): moves pixels and cannot "
                                       "move boxes, masks or keypoints"));
  EXPECT_EQ(CompileWithTargets("random_apply(ops=[invert, auto_augment])"),
            absl::InvalidArgumentError(
                "pipeline.ops[0] (random_apply): ops[1] (auto_augment): moves pixels and cannot "
                "move boxes, masks or keypoints"));
  for (const char* policy : {"trivial_augment_wide", "aug_mix"}) {
    EXPECT_EQ(CompileWithTargets(policy).code(), absl::StatusCode::kInvalidArgument) << policy;
  }
  // Photometric ops (random_erasing too, as in v2) and geometric ones are accepted.
  EXPECT_TRUE(CompileWithTargets("random_erasing(p=1), color_jitter(brightness=0.4), "
                                 "random_resized_crop(height=16, width=16), sanitize_boxes")
                  .ok());
  // Without targets nothing changes.
  EXPECT_TRUE(Pipeline::Compile(SpecFromText("rand_augment"),
                                InputFormat::Decoded({32, 32, 3, PixelType::kUint8}))
                  .ok());
}

TEST(TargetsTest, BatchMixIsRefusedWithTargets) {
  v1::PipelineSpec spec = SpecFromText("to_float");
  spec.mutable_batch_mix()->set_num_classes(10);
  spec.mutable_batch_mix()->set_mixup_alpha(1);
  PipelineOptions options;
  options.with_targets = true;
  const absl::Status status =
      Pipeline::Compile(spec, InputFormat::Decoded({8, 8, 3, PixelType::kUint8}), options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.batch_mix: mixes images across samples"));
}

TEST(TargetsTest, RunWithTargetsChecksItsInputs) {
  const ImageShape shape{20, 30, 1, PixelType::kUint8};
  std::vector<uint8_t> image(shape.elements(), 0), out(20 * 30);
  const SampleInput input = SampleInput::Decoded(ImageView{image.data(), shape});
  PipelineWorkspace workspace;
  CounterRng rng(1);
  SampleTargets t = TwoBoxes();
  absl::StatusOr<Pipeline> plain =
      Pipeline::Compile(SpecFromText("horizontal_flip"), InputFormat::Decoded(shape));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->RunWithTargets(input, &rng, &workspace, out.data(), &t).code(),
            absl::StatusCode::kFailedPrecondition);

  PipelineOptions options;
  options.with_targets = true;
  absl::StatusOr<Pipeline> pipeline =
      Pipeline::Compile(SpecFromText("to_float"), InputFormat::Decoded(shape), options);
  ASSERT_TRUE(pipeline.ok());
  out.resize(pipeline->output_bytes_per_sample());
  t.canvas_height = 10;
  t.masks->height = 10;
  t.masks->pixels.resize(2 * 10 * 30);
  EXPECT_EQ(pipeline->RunWithTargets(input, &rng, &workspace, out.data(), &t),
            absl::InvalidArgumentError("targets.canvas_size 10x30 differs from the image's 20x30"));
  t = TwoBoxes();
  t.box_labels->push_back(1);
  EXPECT_EQ(pipeline->RunWithTargets(input, &rng, &workspace, out.data(), &t),
            absl::InvalidArgumentError("targets.box_labels has 3 entries for 2 boxes"));
}

}  // namespace
}  // namespace stoker
