// The mask oracle (target_oracle.h) for every geometric op, on a generated scene and on a real
// photograph: each op's moved boxes match where the op moved the painted box pixels, its
// instance masks equal those pixels where the op samples nearest, and keypoints stay with their
// boxes. An op whose hook reported no move (or drew differently from Apply) fails here.

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "augment/kernels/decode.h"
#include "augment/op.h"
#include "augment/pipeline.h"
#include "augment/synthetic_images.h"
#include "augment/targets/target_oracle.h"
#include "augment/testing/fixture_files.h"
#include "augment/testing/spec_from_text.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

constexpr int kTrials = 24;

OracleScene GeneratedScene() {
  const ImageShape shape{60, 80, 3, PixelType::kUint8};
  return PaintedScene(NaturalImage(shape.height, shape.width, 3, 5), shape,
                      {{10, 8, 30, 28}, {45, 12, 72, 40}, {20, 35, 50, 55}});
}

OracleScene PhotoScene() {
  return PaintedPhoto(std::string(STOKER_SKIMAGE_DATA_DIR) + "/chelsea.png", kChelseaFace);
}

// Runs `ops` on `scene` for kTrials samples with targets, checks the oracle, and checks that
// the image bytes equal Run's without targets.
void ExpectOracle(const OracleScene& scene, const std::string& ops,
                  const OracleTolerance& tolerance) {
  PipelineOptions options;
  options.with_targets = true;
  absl::StatusOr<Pipeline> pipeline =
      Pipeline::Compile(SpecFromText(ops), InputFormat::Decoded(scene.shape), options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  std::vector<uint8_t> plain(out.size());
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  for (int trial = 0; trial < kTrials; ++trial) {
    SampleTargets targets = scene.targets;
    CounterRng rng = SampleRng(11, 0, trial);
    CounterRng plain_rng = rng;
    const absl::Status status = pipeline->RunWithTargets(SampleInput::Decoded(input), &rng,
                                                         &workspace, out.data(), &targets);
    ASSERT_TRUE(status.ok()) << ops << ": " << status;
    ASSERT_TRUE(pipeline->Run(input, &plain_rng, &workspace, plain.data()).ok());
    EXPECT_EQ(out, plain) << ops << ", trial " << trial << ": the image differs from Run's";
    ExpectTargetsFollowImage(scene, targets, ImageView{out.data(), pipeline->result_shape()},
                             tolerance, ops + ", trial " + std::to_string(trial));
  }
}

struct OracleCase {
  std::string ops;
  OracleTolerance tolerance;
};

std::vector<OracleCase> OracleCases() {
  return {
      {"center_crop(height=40, width=50)", kExact},
      {"random_crop(height=40, width=50)", kExact},
      {"random_crop(height=50, width=90, padding=[4], pad_if_needed=1)", kExact},
      {"random_resized_crop(height=48, width=64)", kResampled},
      {"random_resized_crop(height=48, width=64, interpolation=2)", kResampled},
      {"resize(height=45, width=100)", kResampled},
      {"resize(shorter=30, interpolation=1)", kResampled},
      {"horizontal_flip(p=1)", kExact},
      {"horizontal_flip", kExact},
      {"vertical_flip(p=1)", kExact},
      {"vertical_flip", kExact},
      {"pad(padding=[3, 5, 7, 2])", kExact},
      {"affine(angle=30, translate=[5, -3], scale=1.2, shear=[10, 5])", kWarped},
      {"random_rotation(degrees_min=-40, degrees_max=40)", kWarped},
      {"random_affine(degrees_min=-20, degrees_max=20, translate=[0.1, 0.1], scale_min=0.8, "
       "scale_max=1.2, shear=[-10, 10, -5, 5])",
       kWarped},
      {"random_perspective(distortion_scale=0.5, p=1)", kPerspective},
      {"random_perspective", kPerspective},
      {"random_apply(ops=[posterize(bits=4), horizontal_flip(p=1), "
       "random_rotation(degrees_min=-30, degrees_max=30)], p=0.5)",
       kWarped},
      {"random_choice(ops=[horizontal_flip(p=1), vertical_flip(p=1), "
       "random_perspective(p=1)])",
       kPerspective},
      {"random_order(ops=[posterize(bits=4, p=0.5), vertical_flip, "
       "random_affine(degrees_min=-10, degrees_max=10, translate=[0.2, 0.2])])",
       kWarped},
      {"center_crop(height=40, width=50), horizontal_flip, resize(height=80, width=100), "
       "random_rotation(degrees_min=-10, degrees_max=10)",
       kWarped},
  };
}

// The hook's contract (op.h): the draws of Apply, no more, no fewer.
TEST(OpTargetsTest, HooksDrawWhatApplyDraws) {
  const OracleScene scene = GeneratedScene();
  const ImageView input{const_cast<uint8_t*>(scene.pixels.data()), scene.shape};
  for (const OracleCase& c : OracleCases()) {
    absl::StatusOr<Pipeline> pipeline =
        Pipeline::Compile(SpecFromText(c.ops), InputFormat::Decoded(scene.shape));
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    const Op& op = pipeline->op(0);
    const bool combinator =
        op.name() == "random_apply" || op.name() == "random_choice" || op.name() == "random_order";
    if (pipeline->num_ops() != 1 || combinator) continue;  // Those track through ApplyTracked.
    ImageBuffer out, scratch;
    out.Reshape(pipeline->result_shape());
    for (int trial = 0; trial < kTrials; ++trial) {
      CounterRng applied = SampleRng(5, 0, trial);
      CounterRng drawn = applied;
      ASSERT_TRUE(op.Apply(input, &applied, &scratch, out.view()).ok());
      TargetMoves moves;
      op.DrawTargetMoves(scene.shape, &drawn, &moves);
      EXPECT_EQ(applied.NextU64(), drawn.NextU64()) << c.ops << ", trial " << trial;
    }
  }
}

TEST(OpTargetsTest, OracleHoldsOnGeneratedScenes) {
  const OracleScene scene = GeneratedScene();
  for (const OracleCase& c : OracleCases()) ExpectOracle(scene, c.ops, c.tolerance);
}

TEST(OpTargetsTest, OracleHoldsOnAPhotograph) {
  const OracleScene scene = PhotoScene();
  for (const OracleCase& c : OracleCases()) ExpectOracle(scene, c.ops, c.tolerance);
}

}  // namespace
}  // namespace stoker
