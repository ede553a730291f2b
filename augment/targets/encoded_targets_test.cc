// Targets through the encoded-input paths (pipeline.h): the fused decode-and-crop (a window
// decoded alone, at full scale or at 1/d in the DCT domain) and a JPEG decoded downscaled for a
// resize. The mask oracle (target_oracle.h) on skimage's chelsea photograph, its face box
// painted into the green channel and encoded as a JPEG.

#include <cstdint>
#include <string>
#include <vector>

#include "augment/pipeline.h"
#include "augment/synthetic_images.h"
#include "augment/targets/move_targets.h"
#include "augment/targets/target_oracle.h"
#include "augment/testing/spec_from_text.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

constexpr int kEncodedTrials = 16;
// JPEG's ringing and the DCT-domain scaling move the painted plane's edges by up to a pixel more.
constexpr OracleTolerance kJpegCopied{1, false, false};
constexpr OracleTolerance kJpegResampled{2, false, false};

OracleScene ChelseaScene() {
  return PaintedPhoto(std::string(STOKER_SKIMAGE_DATA_DIR) + "/chelsea.png", kChelseaFace);
}

std::vector<uint8_t> SceneJpeg(const OracleScene& scene) {
  return EncodeJpeg(ImageView{const_cast<uint8_t*>(scene.pixels.data()), scene.shape}, 95,
                    /*progressive=*/false, ChromaSubsampling::k444);
}

absl::StatusOr<Pipeline> EncodedWithTargets(const std::string& ops) {
  PipelineOptions options;
  options.with_targets = true;
  return Pipeline::Compile(SpecFromText(ops), InputFormat::Encoded(), options);
}

void ExpectEncodedOracle(const std::string& ops, bool fused, const OracleTolerance& tolerance) {
  const OracleScene scene = ChelseaScene();
  const std::vector<uint8_t> jpeg = SceneJpeg(scene);
  ASSERT_FALSE(jpeg.empty());
  absl::StatusOr<Pipeline> pipeline = EncodedWithTargets(ops);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ(pipeline->fuses_decode_crop(), fused) << ops;
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample()), plain(out.size());
  SampleInput input;
  input.encoded = jpeg;
  for (int trial = 0; trial < kEncodedTrials; ++trial) {
    SampleTargets targets = scene.targets;
    CounterRng rng = SampleRng(3, 1, trial);
    CounterRng plain_rng = rng;
    const absl::Status status =
        pipeline->RunWithTargets(input, &rng, &workspace, out.data(), &targets);
    ASSERT_TRUE(status.ok()) << ops << ": " << status;
    ASSERT_TRUE(pipeline->Run(input, &plain_rng, &workspace, plain.data()).ok());
    EXPECT_EQ(out, plain) << ops << ", trial " << trial << ": the image differs from Run's";
    ExpectTargetsFollowImage(scene, targets, ImageView{out.data(), pipeline->result_shape()},
                             tolerance, ops + ", trial " + std::to_string(trial));
  }
}

TEST(EncodedTargetsTest, FusedWindowAtFullScale) {
  ExpectEncodedOracle("decode, center_crop(height=200, width=300), horizontal_flip", true,
                      kJpegCopied);
  ExpectEncodedOracle("decode, random_crop(height=200, width=300), vertical_flip", true,
                      kJpegCopied);
  // PIL-exact resampling is never fed a downscaled window.
  ExpectEncodedOracle("decode, random_resized_crop(height=96, width=128, interpolation=2)", true,
                      kJpegResampled);
}

TEST(EncodedTargetsTest, FusedWindowDecodedDownscaled) {
  ExpectEncodedOracle("decode, random_resized_crop(height=48, width=64, scale_min=0.5)", true,
                      kJpegResampled);
}

TEST(EncodedTargetsTest, DecodeDownscaledForAResize) {
  // 300 x 451 decodes at 1/4 (75 x 113) for a 75 x 112 resize, at 1/2 for shorter=150.
  ExpectEncodedOracle("decode, resize(height=75, width=112)", false, kJpegResampled);
  ExpectEncodedOracle("decode, resize(shorter=150), center_crop(height=140, width=200)", false,
                      kJpegResampled);
}

// The decode's downscale and the resize it was made for move targets as one resize from the
// full size, as torchvision resizes: masks as one nearest resize of the full-size masks.
TEST(EncodedTargetsTest, DecodeDownscaleAndResizeAreOneResize) {
  const OracleScene scene = ChelseaScene();
  const std::vector<uint8_t> jpeg = SceneJpeg(scene);
  absl::StatusOr<Pipeline> pipeline = EncodedWithTargets("decode, resize(height=75, width=112)");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  SampleInput input;
  input.encoded = jpeg;
  SampleTargets moved = scene.targets;
  CounterRng rng(1);
  ASSERT_TRUE(pipeline->RunWithTargets(input, &rng, &workspace, out.data(), &moved).ok());
  SampleTargets expected = scene.targets;
  ASSERT_TRUE(
      MoveTargets({ResizeMove(scene.shape.height, scene.shape.width, 75, 112)}, &expected).ok());
  EXPECT_EQ(*moved.boxes, *expected.boxes);
  EXPECT_EQ(moved.masks->pixels, expected.masks->pixels);
}

// random_iou_crop chooses from the boxes as the steps before it moved them: here through a JPEG
// decoded at 1/2 for the resize, which counts as one resize from the full size (BoxesAfter).
// The one box always holds the crop's centre test, so it is kept and must follow its pixels.
TEST(EncodedTargetsTest, IouCropChoosesFromTheBoxesMovedSoFar) {
  const OracleScene scene = ChelseaScene();
  const std::vector<uint8_t> jpeg = SceneJpeg(scene);
  absl::StatusOr<Pipeline> pipeline = EncodedWithTargets(
      "decode, resize(height=150, width=225), random_iou_crop, resize(height=150, width=150)");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  SampleInput input;
  input.encoded = jpeg;
  for (int trial = 0; trial < kEncodedTrials; ++trial) {
    SampleTargets targets = scene.targets;
    CounterRng rng = SampleRng(5, 1, trial);
    ASSERT_TRUE(pipeline->RunWithTargets(input, &rng, &workspace, out.data(), &targets).ok());
    ExpectTargetsFollowImage(scene, targets, ImageView{out.data(), pipeline->result_shape()},
                             kJpegResampled, "trial " + std::to_string(trial));
  }
}

TEST(EncodedTargetsTest, UnfusedPaths) {
  ExpectEncodedOracle(
      "decode, random_rotation(degrees_min=-20, degrees_max=20), "
      "resize(height=150, width=225)",
      false, OracleTolerance{3, false, false});
}

}  // namespace
}  // namespace stoker
