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

// How closely a moved box must match its painted pixels' bounding box, per coordinate.
struct OracleTolerance {
  float pixels;        // 0 where v2 is exact (flips, crops, pad)
  bool masks_exact;    // the op samples nearest: moved masks == painted pixels
  bool contains_mask;  // warps: the box contains the pixels' box (within half a pixel)
};
constexpr OracleTolerance kExact{0, true, false};
constexpr OracleTolerance kResampled{1, false, false};
constexpr OracleTolerance kWarped{2, true, true};
// The perspective warp of a 3-channel image and of a 1-channel mask (the latter equal to
// torchvision's bit for bit: mask_torchvision_test) round a few boundary samples differently.
constexpr OracleTolerance kPerspective{2, false, true};

OracleScene GeneratedScene() {
  const ImageShape shape{60, 80, 3, PixelType::kUint8};
  return PaintedScene(NaturalImage(shape.height, shape.width, 3, 5), shape,
                      {{10, 8, 30, 28}, {45, 12, 72, 40}, {20, 35, 50, 55}});
}

// skimage's chelsea (a cat, 300 x 451), its green channel replaced by the cat's face box.
OracleScene PhotoScene() {
  const std::vector<uint8_t> png =
      ReadFixtureFile(std::string(STOKER_SKIMAGE_DATA_DIR) + "/chelsea.png");
  ImageDecoder decoder;
  const absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(png, {50'000'000, 100});
  EXPECT_TRUE(header.ok()) << header.status();
  const ImageShape shape = ScaledSize(*header, 1, 3);
  std::vector<uint8_t> pixels(shape.elements());
  EXPECT_TRUE(decoder.Decode(png, ImageView{pixels.data(), shape}).ok());
  OracleScene scene = PaintedScene(std::move(pixels), shape, {});
  // One box, in channel 1: red and blue stay the photograph's.
  const std::array<uint32_t, 4> face = {140, 40, 290, 200};
  OracleScene painted = PaintedScene(std::move(scene.pixels), shape, {{0, 0, 1, 1}, face});
  painted.targets.boxes->erase(painted.targets.boxes->begin(), painted.targets.boxes->begin() + 4);
  painted.targets.box_labels->erase(painted.targets.box_labels->begin());
  TargetMasks& masks = *painted.targets.masks;
  masks.pixels.erase(masks.pixels.begin(),
                     masks.pixels.begin() + size_t{shape.height} * shape.width);
  masks.count = 1;
  TargetKeypoints& keypoints = *painted.targets.keypoints;
  keypoints.xy.erase(keypoints.xy.begin(), keypoints.xy.begin() + 2);
  keypoints.visibility.erase(keypoints.visibility.begin());
  keypoints.count = 1;
  painted.channel_of = {1};
  return painted;
}

void ExpectNear(const std::array<float, 4>& box, const std::array<float, 4>& pixels,
                float tolerance, const std::string& what) {
  for (int k = 0; k < 4; ++k) {
    EXPECT_LE(std::fabs(box[k] - pixels[k]), tolerance)
        << what << " coordinate " << k << ": box " << box[k] << ", pixels " << pixels[k];
  }
}

// Checks one sample's moved targets against the image the pipeline made of the scene.
void ExpectTargetsFollowImage(const OracleScene& scene, const SampleTargets& moved,
                              const ImageView& image, const OracleTolerance& tolerance,
                              const std::string& what) {
  ASSERT_EQ(moved.canvas_height, image.shape.height) << what;
  ASSERT_EQ(moved.canvas_width, image.shape.width) << what;
  ASSERT_EQ(moved.box_count(), scene.channel_of.size()) << what;
  for (size_t i = 0; i < moved.box_count(); ++i) {
    const std::string name = what + ", box " + std::to_string(i);
    const std::array<float, 4> box = {(*moved.boxes)[i * 4], (*moved.boxes)[i * 4 + 1],
                                      (*moved.boxes)[i * 4 + 2], (*moved.boxes)[i * 4 + 3]};
    const std::optional<std::array<float, 4>> pixels = PlaneBox(image, scene.channel_of[i]);
    const std::optional<std::array<float, 4>> mask = MaskBox(*moved.masks, i);
    if (!pixels.has_value()) {
      // Cropped or warped out: the clamped box is (nearly) empty.
      EXPECT_TRUE(box[2] - box[0] <= tolerance.pixels + 1 ||
                  box[3] - box[1] <= tolerance.pixels + 1)
          << name << " kept a box for pixels that left the image";
      continue;
    }
    ExpectNear(box, *pixels, tolerance.pixels, name);
    if (tolerance.contains_mask) {
      EXPECT_LE(box[0], (*pixels)[0] + 0.5f) << name;
      EXPECT_LE(box[1], (*pixels)[1] + 0.5f) << name;
      EXPECT_GE(box[2], (*pixels)[2] - 0.5f) << name;
      EXPECT_GE(box[3], (*pixels)[3] - 0.5f) << name;
    }
    ASSERT_TRUE(mask.has_value()) << name;
    ExpectNear(*mask, *pixels, tolerance.masks_exact ? 0 : 1, name + " mask");
    // Keypoints are not clamped (v2): one that stays on the canvas stays in its box.
    const float kx = moved.keypoints->xy[i * 2], ky = moved.keypoints->xy[i * 2 + 1];
    if (kx >= 0 && kx < image.shape.width && ky >= 0 && ky < image.shape.height) {
      EXPECT_TRUE(kx >= box[0] - 1 && kx <= box[2] + 1 && ky >= box[1] - 1 && ky <= box[3] + 1)
          << name << " keypoint (" << kx << ", " << ky << ") left its box";
    }
  }
  if (tolerance.masks_exact) {
    for (size_t i = 0; i < moved.box_count(); ++i) {
      const uint8_t* mask = moved.masks->pixels.data() + i * image.shape.height * image.shape.width;
      const auto* p = image.pixels<const uint8_t>();
      size_t differing = 0;
      for (size_t j = 0; j < size_t{image.shape.height} * image.shape.width; ++j) {
        differing += (mask[j] != 0) != (p[j * 3 + scene.channel_of[i]] >= 128);
      }
      EXPECT_EQ(differing, 0u) << what << ", mask " << i;
    }
  }
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
