// The detection references' two box-driven ops, zoom_out (v2's RandomZoomOut) and
// random_iou_crop (v2's RandomIoUCrop): their draws agree across the hooks, the crop keeps the
// boxes centred inside it and follows the painted pixels (the mask oracle), a sample no crop
// fits is left as it is, and the pipeline refuses them where they cannot run.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "augment/op.h"
#include "augment/op_registry.h"
#include "augment/pipeline.h"
#include "augment/synthetic_images.h"
#include "augment/targets/move_targets.h"
#include "augment/targets/target_oracle.h"
#include "augment/testing/spec_from_text.h"
#include "common/bad_sample.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

constexpr int kDetectionTrials = 40;

OracleScene DetectionScene() {
  const ImageShape shape{90, 120, 3, PixelType::kUint8};
  return PaintedScene(NaturalImage(shape.height, shape.width, 3, 9), shape,
                      {{10, 8, 40, 38}, {70, 20, 110, 60}, {30, 50, 60, 85}});
}

std::unique_ptr<Op> MakeDetectionOp(const std::string& text, const ImageShape& input) {
  const v1::PipelineSpec spec = SpecFromText(text);
  absl::StatusOr<std::unique_ptr<Op>> op = CreateOp(spec.ops(0), 0, input);
  EXPECT_TRUE(op.ok()) << op.status();
  return op.ok() ? *std::move(op) : nullptr;
}

// The crop window a random_iou_crop reported, if any.
std::optional<TargetMove> CropOf(const TargetMoves& moves) {
  if (moves.empty()) return std::nullopt;
  EXPECT_EQ(moves.size(), 1u);
  EXPECT_TRUE(moves[0].zero_boxes_centred_outside);
  return moves[0];
}

struct CropRun {
  ImageBuffer image;
  TargetMoves moves;
  SampleTargets targets;
};

// Runs `op` (random_iou_crop) on `scene` with the scene's boxes, sizing the output as the
// executor does, and moves the targets.
CropRun RunIouCrop(const Op& op, const OracleScene& scene, CounterRng rng) {
  CropRun run;
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  const std::vector<float>& boxes = *scene.targets.boxes;
  absl::StatusOr<ImageShape> shape = op.DrawOutputShape(scene.shape, rng, boxes);
  EXPECT_TRUE(shape.ok()) << shape.status();
  run.image.Reshape(*shape);
  EXPECT_TRUE(op.ApplyTrackedWithBoxes(input, boxes, &rng, run.image.view(), &run.moves).ok());
  run.targets = scene.targets;
  EXPECT_TRUE(MoveTargets(run.moves, &run.targets).ok());
  return run;
}

TEST(DetectionOpsTest, IouCropKeepsTheBoxesCentredInsideAndFollowsThePixels) {
  const OracleScene scene = DetectionScene();
  const std::unique_ptr<Op> op = MakeDetectionOp("random_iou_crop", scene.shape);
  ASSERT_NE(op, nullptr);
  int cropped = 0;
  for (int trial = 0; trial < kDetectionTrials; ++trial) {
    const CropRun run = RunIouCrop(*op, scene, SampleRng(3, 0, trial));
    const std::optional<TargetMove> crop = CropOf(run.moves);
    const std::string what = "trial " + std::to_string(trial);
    if (!crop) {  // Option 1.0: the sample as it is.
      EXPECT_EQ(run.targets.boxes, scene.targets.boxes) << what;
      continue;
    }
    ++cropped;
    EXPECT_EQ(run.image.view().shape.height, crop->out_height) << what;
    EXPECT_EQ(run.image.view().shape.width, crop->out_width) << what;
    int inside = 0;
    for (size_t i = 0; i < scene.targets.box_count(); ++i) {
      const float* b = &(*scene.targets.boxes)[i * 4];
      const float* moved = &(*run.targets.boxes)[i * 4];
      const float cx = 0.5f * (b[0] + b[2]) - crop->left, cy = 0.5f * (b[1] + b[3]) - crop->top;
      const bool centred_inside = cx > 0 && cx < crop->out_width && cy > 0 && cy < crop->out_height;
      inside += centred_inside;
      if (!centred_inside) {
        EXPECT_THAT(std::vector<float>(moved, moved + 4), ::testing::Each(0.0f)) << what;
        continue;
      }
      const std::optional<std::array<float, 4>> pixels =
          PlaneBox(run.image.view(), scene.channel_of[i]);
      ASSERT_TRUE(pixels.has_value()) << what;
      EXPECT_EQ((std::array<float, 4>{moved[0], moved[1], moved[2], moved[3]}), *pixels) << what;
      EXPECT_EQ(MaskBox(*run.targets.masks, i), pixels) << what;
    }
    EXPECT_GT(inside, 0) << what << ": a crop must hold some box's centre";
  }
  EXPECT_GT(cropped, kDetectionTrials / 2);  // 6 of the 7 default options crop
}

TEST(DetectionOpsTest, IouCropLeavesASampleNoCropFitsAsItIs) {
  const OracleScene scene = DetectionScene();
  // No 30x30 box can overlap a crop of at least 0.3 of 90x120 with IoU 0.95: v2 would draw
  // options for ever; after 100 the sample passes unchanged.
  const std::unique_ptr<Op> op =
      MakeDetectionOp("random_iou_crop(sampler_options=[0.95])", scene.shape);
  ASSERT_NE(op, nullptr);
  const CropRun run = RunIouCrop(*op, scene, SampleRng(3, 0, 1));
  EXPECT_TRUE(run.moves.empty());
  EXPECT_EQ(run.image.view().shape, scene.shape);
  EXPECT_TRUE(std::equal(scene.pixels.begin(), scene.pixels.end(),
                         static_cast<const uint8_t*>(run.image.view().data)));
  EXPECT_EQ(run.targets.boxes, scene.targets.boxes);
}

TEST(DetectionOpsTest, IouCropOptionOneEndsAfterOneDraw) {
  const OracleScene scene = DetectionScene();
  const std::unique_ptr<Op> op =
      MakeDetectionOp("random_iou_crop(sampler_options=[1])", scene.shape);
  ASSERT_NE(op, nullptr);
  CounterRng rng = SampleRng(3, 0, 2);
  CounterRng expected = rng;
  expected.UniformInt(1);
  ImageBuffer out;
  out.Reshape(scene.shape);
  TargetMoves moves;
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  ASSERT_TRUE(
      op->ApplyTrackedWithBoxes(input, *scene.targets.boxes, &rng, out.view(), &moves).ok());
  EXPECT_TRUE(moves.empty());
  EXPECT_EQ(rng.NextU64(), expected.NextU64());
}

// Apply, the hook and the shape all make the same draws (op.h's contract).
TEST(DetectionOpsTest, ZoomOutHooksDrawWhatApplyDraws) {
  const OracleScene scene = DetectionScene();
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  const std::unique_ptr<Op> op = MakeDetectionOp("zoom_out(side_max=2.5)", scene.shape);
  ASSERT_NE(op, nullptr);
  int zoomed = 0;
  for (int trial = 0; trial < kDetectionTrials; ++trial) {
    CounterRng applied = SampleRng(4, 0, trial);
    CounterRng drawn = applied;
    absl::StatusOr<ImageShape> shape = op->DrawOutputShape(scene.shape, applied, {});
    ASSERT_TRUE(shape.ok()) << shape.status();
    ImageBuffer out, scratch;
    out.Reshape(*shape);
    ASSERT_TRUE(op->Apply(input, &applied, &scratch, out.view()).ok());
    TargetMoves moves;
    op->DrawTargetMoves(scene.shape, &drawn, &moves);
    EXPECT_EQ(applied.NextU64(), drawn.NextU64()) << "trial " << trial;
    if (moves.empty()) {
      EXPECT_EQ(*shape, scene.shape);
      continue;
    }
    ++zoomed;
    EXPECT_EQ(moves[0].out_height, shape->height);
    EXPECT_EQ(moves[0].out_width, shape->width);
    EXPECT_LE(shape->width, scene.shape.width * 2.5);
  }
  EXPECT_GT(zoomed, 0);
  EXPECT_LT(zoomed, kDetectionTrials);
}

// The mask oracle through a whole pipeline: zoom out, IoU crop, flip, resize; boxes the crop
// kept follow their pixels (the others are degenerate: IouCropKeepsTheBoxesCentredInside...).
TEST(DetectionOpsTest, DetectionPipelineMovesTheTargetsWithTheImage) {
  const OracleScene scene = DetectionScene();
  PipelineOptions options;
  options.with_targets = true;
  absl::StatusOr<Pipeline> pipeline =
      Pipeline::Compile(SpecFromText("zoom_out(side_max=2), random_iou_crop, horizontal_flip, "
                                     "resize(height=64, width=64, interpolation=1)"),
                        InputFormat::Decoded(scene.shape), options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  const ImageView image{out.data(), pipeline->result_shape()};
  for (int trial = 0; trial < kDetectionTrials; ++trial) {
    SampleTargets targets = scene.targets;
    CounterRng rng = SampleRng(7, 0, trial);
    ASSERT_TRUE(
        pipeline
            ->RunWithTargets(SampleInput::Decoded(input), &rng, &workspace, out.data(), &targets)
            .ok());
    for (size_t i = 0; i < targets.box_count(); ++i) {
      const float* box = &(*targets.boxes)[i * 4];
      if (box[2] == box[0] || box[3] == box[1]) continue;  // centred outside: degenerate
      const std::optional<std::array<float, 4>> pixels = PlaneBox(image, scene.channel_of[i]);
      ASSERT_TRUE(pixels.has_value()) << "trial " << trial << ", box " << i;
      for (int k = 0; k < 4; ++k) {
        EXPECT_NEAR(box[k], (*pixels)[k], 1.0f) << "trial " << trial << ", box " << i;
      }
    }
  }
}

TEST(DetectionOpsTest, ZoomOutHoldsTheMaskOracle) {
  const OracleScene scene = DetectionScene();
  PipelineOptions options;
  options.with_targets = true;
  absl::StatusOr<Pipeline> pipeline = Pipeline::Compile(
      SpecFromText("zoom_out(p=1, side_max=3), center_crop(height=90, width=120)"),
      InputFormat::Decoded(scene.shape), options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  std::vector<uint8_t> plain(out.size());
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  for (int trial = 0; trial < kDetectionTrials; ++trial) {
    SampleTargets targets = scene.targets;
    CounterRng rng = SampleRng(8, 0, trial);
    CounterRng plain_rng = rng;
    ASSERT_TRUE(
        pipeline
            ->RunWithTargets(SampleInput::Decoded(input), &rng, &workspace, out.data(), &targets)
            .ok());
    ASSERT_TRUE(pipeline->Run(input, &plain_rng, &workspace, plain.data()).ok());
    EXPECT_EQ(out, plain) << "trial " << trial;
    ExpectTargetsFollowImage(scene, targets, ImageView{out.data(), pipeline->result_shape()},
                             kExact, "trial " + std::to_string(trial));
  }
}

TEST(DetectionOpsTest, ZoomOutCanvasOverThePixelBudgetIsABadSample) {
  const ImageShape large{3000, 4000, 3, PixelType::kUint8};  // 12 MP; x16 per side: 3 GP
  const std::unique_ptr<Op> op = MakeDetectionOp("zoom_out(side_min=16, side_max=16, p=1)", large);
  ASSERT_NE(op, nullptr);
  const absl::StatusOr<ImageShape> shape = op->DrawOutputShape(large, SampleRng(1, 0, 0), {});
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BadSampleReasonOf(shape.status()), BadSampleReason::kTooLarge);
  EXPECT_THAT(shape.status().message(), HasSubstr("64000x48000 exceeds the pixel budget"));
}

TEST(DetectionOpsTest, IouCropWithoutTargetsIsRefusedNamingTheOp) {
  const absl::StatusOr<Pipeline> pipeline =
      Pipeline::Compile(SpecFromText("random_iou_crop, resize(height=8, width=8)"),
                        InputFormat::Decoded(ImageShape{16, 16, 3, PixelType::kUint8}));
  EXPECT_EQ(pipeline.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pipeline.status().message(),
              HasSubstr("pipeline.ops[0] (random_iou_crop): chooses its crop from the sample's "
                        "boxes"));
}

TEST(DetectionOpsTest, OpsThatDrawTheirSizeAreRefusedNested) {
  const absl::StatusOr<Pipeline> pipeline =
      Pipeline::Compile(SpecFromText("random_apply(ops=[zoom_out]), resize(height=8, width=8)"),
                        InputFormat::Decoded(ImageShape{16, 16, 3, PixelType::kUint8}));
  EXPECT_EQ(pipeline.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pipeline.status().message(), HasSubstr("ops[0] (zoom_out): a nested op must keep"));
}

TEST(DetectionOpsTest, BadArgumentsAreRefusedNamingTheField) {
  const ImageShape shape{16, 16, 3, PixelType::kUint8};
  const v1::PipelineSpec zoom = SpecFromText("zoom_out(side_min=3, side_max=2)");
  EXPECT_THAT(CreateOp(zoom.ops(0), 0, shape).status().message(),
              HasSubstr("side_min and side_max must satisfy"));
  const v1::PipelineSpec crop = SpecFromText("random_iou_crop(sampler_options=[0.5, -1])");
  const absl::Status status = CreateOp(crop.ops(0), 0, shape).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("sampler_options[1] must be >= 0"));
}

}  // namespace
}  // namespace stoker
