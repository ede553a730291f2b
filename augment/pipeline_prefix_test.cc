// Decoded prefix (pipeline.h): the split of a pipeline into its deterministic prefix and random
// suffix, RunPrefix + RunSuffix equal to Run bit for bit (and to Run without the option, fused
// decode-and-crop off), targets moved the same when the suffix runs on a kept prefix image, and
// the prefix fingerprint.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/pipeline.h"
#include "augment/synthetic_images.h"
#include "augment/testing/spec_from_text.h"
#include "common/bad_sample.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// JPEGs of a few sizes, odd ones included, and large enough for a DCT-scaled decode before the
// resizes below.
std::vector<std::vector<uint8_t>> PrefixTestJpegs() {
  std::vector<std::vector<uint8_t>> jpegs;
  const uint32_t sizes[][2] = {{120, 160}, {97, 131}, {200, 150}, {413, 517}, {64, 64}};
  uint64_t seed = 11;
  for (const auto& size : sizes) {
    const std::vector<uint8_t> pixels = NaturalImage(size[0], size[1], 3, seed++);
    jpegs.push_back(EncodeJpeg(ImageView{const_cast<uint8_t*>(pixels.data()),
                                         ImageShape{size[0], size[1], 3, PixelType::kUint8}},
                               90));
  }
  return jpegs;
}

absl::StatusOr<Pipeline> CompilePrefixed(const std::string& text, bool decoded_prefix,
                                         bool with_targets = false) {
  PipelineOptions options;
  options.decoded_prefix = decoded_prefix;
  options.fuse_decode_crop = false;  // The reference: what a cache-less run gives unfused.
  options.with_targets = with_targets;
  return Pipeline::Compile(SpecFromText(text), InputFormat::Encoded(), options);
}

// Boxes (one partly outside after crops) and two instance masks on `canvas`.
SampleTargets PrefixTestTargets(const ImageShape& canvas) {
  SampleTargets targets;
  targets.canvas_height = canvas.height;
  targets.canvas_width = canvas.width;
  const float h = static_cast<float>(canvas.height);
  const float w = static_cast<float>(canvas.width);
  targets.boxes =
      std::vector<float>{0.1f * w, 0.2f * h, 0.6f * w, 0.7f * h, 0.0f, 0.0f, 0.3f * w, 0.25f * h};
  TargetMasks masks;
  masks.count = 2;
  masks.height = canvas.height;
  masks.width = canvas.width;
  masks.pixels.assign(size_t{2} * canvas.height * canvas.width, 0);
  for (uint32_t y = 0; y < canvas.height; ++y) {
    for (uint32_t x = 0; x < canvas.width; ++x) {
      masks.pixels[size_t{y} * canvas.width + x] = (x + y) % 3 == 0;
      masks.pixels[(size_t{canvas.height} + y) * canvas.width + x] = x < canvas.width / 2;
    }
  }
  targets.masks = std::move(masks);
  return targets;
}

struct PrefixCase {
  std::string ops;
  size_t prefix_ops;
  bool with_targets = false;
};

// For every JPEG and several (seed, epoch, index): Run with the decoded prefix, RunPrefix then
// RunSuffix on a copy of the prefix image (in another workspace), and Run compiled without the
// option give the same bytes (and, with targets, the same boxes and masks).
void ExpectSplitRunsEqual(const PrefixCase& c) {
  SCOPED_TRACE(c.ops);
  absl::StatusOr<Pipeline> prefixed = CompilePrefixed(c.ops, true, c.with_targets);
  absl::StatusOr<Pipeline> plain = CompilePrefixed(c.ops, false, c.with_targets);
  ASSERT_TRUE(prefixed.ok()) << prefixed.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(prefixed->prefix_ops(), c.prefix_ops);
  EXPECT_NE(prefixed->prefix_fingerprint(), 0u);
  EXPECT_FALSE(prefixed->fuses_decode_crop());
  PipelineWorkspace run_workspace, prefix_workspace, suffix_workspace;
  const size_t bytes = prefixed->output_bytes_per_sample();
  std::vector<uint8_t> whole(bytes), split(bytes), reference(bytes);
  int compared = 0;
  for (const std::vector<uint8_t>& jpeg : PrefixTestJpegs()) {
    const SampleInput input = SampleInput::Encoded(jpeg);
    ImageView kept_view;
    ASSERT_TRUE(prefixed->RunPrefix(input, &prefix_workspace, &kept_view).ok());
    // The cache's copy: other memory than the workspace's.
    ImageBuffer kept;
    kept.Reshape(kept_view.shape);
    std::memcpy(kept.view().data, kept_view.data, kept_view.shape.bytes());
    absl::StatusOr<ImageShape> canvas = prefixed->TargetCanvas(input, &run_workspace);
    ASSERT_TRUE(canvas.ok()) << canvas.status();
    for (uint64_t epoch = 0; epoch < 3; ++epoch) {
      for (uint64_t index = 0; index < 4; ++index) {
        SCOPED_TRACE(::testing::Message() << kept_view.shape.height << "x" << kept_view.shape.width
                                          << " epoch " << epoch << " index " << index);
        CounterRng run_rng = SampleRng(17, epoch, index);
        CounterRng split_rng = run_rng;
        CounterRng plain_rng = run_rng;
        if (!c.with_targets) {
          ASSERT_TRUE(prefixed->Run(input, &run_rng, &run_workspace, whole.data()).ok());
          ASSERT_TRUE(
              prefixed->RunSuffix(kept.view(), &split_rng, &suffix_workspace, split.data()).ok());
          ASSERT_TRUE(plain->Run(input, &plain_rng, &run_workspace, reference.data()).ok());
        } else {
          SampleTargets run_targets = PrefixTestTargets(*canvas);
          SampleTargets split_targets = run_targets;
          SampleTargets plain_targets = run_targets;
          ASSERT_TRUE(
              prefixed->RunWithTargets(input, &run_rng, &run_workspace, whole.data(), &run_targets)
                  .ok());
          const absl::Status status = prefixed->RunSuffixWithTargets(
              kept.view(), *canvas, &split_rng, &suffix_workspace, split.data(), &split_targets);
          ASSERT_TRUE(status.ok()) << status;
          ASSERT_TRUE(plain
                          ->RunWithTargets(input, &plain_rng, &run_workspace, reference.data(),
                                           &plain_targets)
                          .ok());
          EXPECT_EQ(split_targets.boxes, run_targets.boxes);
          EXPECT_EQ(plain_targets.boxes, run_targets.boxes);
          ASSERT_TRUE(split_targets.masks.has_value());
          EXPECT_EQ(split_targets.masks->pixels, run_targets.masks->pixels);
          EXPECT_EQ(plain_targets.masks->pixels, run_targets.masks->pixels);
        }
        EXPECT_EQ(split, whole) << "RunPrefix + RunSuffix differ from Run";
        EXPECT_EQ(reference, whole) << "Run with the decoded prefix differs from Run without";
        EXPECT_EQ(split_rng.counter(), run_rng.counter()) << "the suffix drew differently";
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 60);
}

TEST(DecodedPrefixTest, SplitRunsEqualRun) {
  const char* const kNormalize = "normalize(mean=[0.4, 0.5, 0.6], std=[0.2, 0.3, 0.25])";
  const std::vector<PrefixCase> cases = {
      // Decode alone, then the random ops (the fused decode-and-crop would take ops[1]).
      {absl::StrCat("decode, random_resized_crop(height=32, width=32), horizontal_flip, "
                    "to_float, ",
                    kNormalize),
       1},
      {"decode, random_crop(height=40, width=40)", 1},
      // center_crop ends the prefix; a table tail follows.
      {absl::StrCat("decode, resize(shorter=48), center_crop(height=40, width=40), to_float, ",
                    kNormalize),
       3},
      // Each other deterministic op at the prefix's end, a random suffix after it.
      {"decode, resize(height=40, width=48), grayscale(channels=3), horizontal_flip", 3},
      {"decode, resize(height=40, width=48), affine(angle=10, translate=[2, 3], scale=1.1), "
       "color_jitter(brightness=0.3, contrast=0.2)",
       3},
      {"decode, resize(height=40, width=48), pad(padding=[2, 3], padding_mode=2), "
       "random_crop(height=36, width=40), vertical_flip",
       3},
      {"decode, resize(height=40, width=48), sanitize_boxes, invert", 3},
      // Nothing random: the suffix is the output conversion alone.
      {"decode, resize(shorter=40), center_crop(height=36, width=36)", 3},
      {"decode, resize(height=40, width=40), to_float", 2},
  };
  for (const PrefixCase& c : cases) ExpectSplitRunsEqual(c);
}

TEST(DecodedPrefixTest, SplitRunsEqualRunWithTargets) {
  // Boxes and masks, with a DCT-scaled decode for the resize (the 413x517 JPEG) replayed from
  // sizes, and an op that chooses from the boxes after the prefix.
  ExpectSplitRunsEqual(
      {"decode, resize(shorter=40), center_crop(height=36, width=36), "
       "random_crop(height=32, width=32), horizontal_flip",
       3, true});
  ExpectSplitRunsEqual(
      {"decode, resize(height=96, width=128), sanitize_boxes, random_iou_crop, "
       "resize(height=32, width=32)",
       3, true});
  ExpectSplitRunsEqual(
      {"decode, random_resized_crop(height=32, width=32), vertical_flip", 1, true});
}

TEST(DecodedPrefixTest, NoPrefixWithoutTheOptionOrForDecodedInput) {
  absl::StatusOr<Pipeline> off = CompilePrefixed("decode, resize(height=8, width=8)", false);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->prefix_ops(), 0u);
  EXPECT_EQ(off->prefix_fingerprint(), 0u);
  PipelineWorkspace workspace;
  ImageView result;
  const std::vector<uint8_t> jpeg = PrefixTestJpegs()[0];
  EXPECT_EQ(off->RunPrefix(SampleInput::Encoded(jpeg), &workspace, &result).code(),
            absl::StatusCode::kFailedPrecondition);
  PipelineOptions options;
  options.decoded_prefix = true;
  absl::StatusOr<Pipeline> decoded =
      Pipeline::Compile(SpecFromText("resize(height=8, width=8)"),
                        InputFormat::Decoded(ImageShape{16, 16, 3, PixelType::kUint8}), options);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->prefix_ops(), 0u);
  EXPECT_EQ(decoded->prefix_fingerprint(), 0u);
  std::vector<uint8_t> out(decoded->output_bytes_per_sample());
  CounterRng rng = SampleRng(1, 0, 0);
  EXPECT_EQ(decoded->RunSuffix(result, &rng, &workspace, out.data()).code(),
            absl::StatusCode::kFailedPrecondition);
  // With the option, the fused decode-and-crop is off.
  absl::StatusOr<Pipeline> fused = Pipeline::Compile(
      SpecFromText("decode, center_crop(height=8, width=8)"), InputFormat::Encoded());
  absl::StatusOr<Pipeline> unfused = Pipeline::Compile(
      SpecFromText("decode, center_crop(height=8, width=8)"), InputFormat::Encoded(), options);
  ASSERT_TRUE(fused.ok() && unfused.ok());
  EXPECT_TRUE(fused->fuses_decode_crop());
  EXPECT_FALSE(unfused->fuses_decode_crop());
}

TEST(DecodedPrefixTest, ErrorsNameTheStepAndShape) {
  absl::StatusOr<Pipeline> pipeline =
      CompilePrefixed("decode, resize(height=40, width=48), horizontal_flip", true);
  ASSERT_TRUE(pipeline.ok());
  PipelineWorkspace workspace;
  ImageView result;
  const std::vector<uint8_t> garbage = {0xff, 0xd8, 0x00, 0x01, 0x02};
  const absl::Status bad = pipeline->RunPrefix(SampleInput::Encoded(garbage), &workspace, &result);
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss) << bad;
  EXPECT_THAT(std::string(bad.message()), HasSubstr("pipeline.ops[0] (decode): "));
  EXPECT_TRUE(BadSampleReasonOf(bad).has_value());
  ImageBuffer wrong;
  wrong.Reshape(ImageShape{40, 47, 3, PixelType::kUint8});
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  CounterRng rng = SampleRng(1, 0, 0);
  const absl::Status shape = pipeline->RunSuffix(wrong.view(), &rng, &workspace, out.data());
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(shape.message()),
              HasSubstr("prefix image is 40x47x3 uint8, the prefix makes 40x48x3 uint8"));
  SampleTargets targets = PrefixTestTargets(ImageShape{100, 100, 3, PixelType::kUint8});
  wrong.Reshape(ImageShape{40, 48, 3, PixelType::kUint8});
  EXPECT_EQ(pipeline
                ->RunSuffixWithTargets(wrong.view(), ImageShape{100, 100, 3, PixelType::kUint8},
                                       &rng, &workspace, out.data(), &targets)
                .code(),
            absl::StatusCode::kFailedPrecondition);  // Not compiled with targets.
  absl::StatusOr<Pipeline> tracked = CompilePrefixed(
      "decode, resize(shorter=40), center_crop(height=36, width=36), horizontal_flip", true, true);
  ASSERT_TRUE(tracked.ok());
  const absl::Status size =
      tracked->RunSuffixWithTargets(wrong.view(), ImageShape{100, 100, 3, PixelType::kUint8}, &rng,
                                    &workspace, out.data(), &targets);
  EXPECT_EQ(size.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(size.message()), HasSubstr("prefix image is 40x48x3 uint8"));
}

uint64_t FingerprintOf(const std::string& ops) {
  absl::StatusOr<Pipeline> pipeline = CompilePrefixed(ops, true);
  EXPECT_TRUE(pipeline.ok()) << ops << ": " << pipeline.status();
  return pipeline.ok() ? pipeline->prefix_fingerprint() : 0;
}

TEST(DecodedPrefixTest, FingerprintNamesThePrefixAlone) {
  const uint64_t base = FingerprintOf(
      "decode, resize(height=40, width=40), center_crop(height=32, "
      "width=32), horizontal_flip, to_float");
  EXPECT_EQ(base, FingerprintOf("decode, resize(height=40, width=40), center_crop(height=32, "
                                "width=32), horizontal_flip, to_float"));
  // Only suffix ops change: the same prefix.
  EXPECT_EQ(base, FingerprintOf("decode, resize(height=40, width=40), center_crop(height=32, "
                                "width=32), random_crop(height=30, width=30), to_float"));
  EXPECT_EQ(base,
            FingerprintOf("decode, resize(height=40, width=40), center_crop(height=32, width=32)"));
  // A prefix argument or the decoded format changes: another prefix.
  EXPECT_NE(base,
            FingerprintOf("decode, resize(height=40, width=41), center_crop(height=32, width=32)"));
  EXPECT_NE(base,
            FingerprintOf("decode, resize(height=40, width=40), center_crop(height=32, width=30)"));
  EXPECT_NE(base, FingerprintOf("decode(channels=1), resize(height=40, width=40), "
                                "center_crop(height=32, width=32)"));
  EXPECT_NE(base, FingerprintOf("decode, resize(height=40, width=40), center_crop(height=32, "
                                "width=32), grayscale(channels=3)"));
  EXPECT_NE(FingerprintOf("decode, random_crop(height=8, width=8)"), base);
}

// A golden: a silent change of the hash, the canonical bytes or the version fails here (and
// would orphan every kept entry). Changing it on purpose means bumping kDecodedPrefixVersion.
TEST(DecodedPrefixTest, FingerprintIsAFixedValue) {
  EXPECT_EQ(kDecodedPrefixVersion, 1u);
  EXPECT_EQ(FingerprintOf("decode, resize(height=40, width=40), center_crop(height=32, width=32)"),
            0x358c4dd218823935ull);
}

}  // namespace
}  // namespace stoker
