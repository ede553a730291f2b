// Fused blur chains (augment/pipeline.h): a pipeline compiled with fuse_blur_chains gives the
// same bytes as the same pipeline run op by op, draws the same sigmas (the sample's RNG is left
// in the same state), fails with the same errors, and fuses only what it may.

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "augment/testing/spec_from_text.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// The pipeline of `spec` for `input`, fused or not.
Pipeline Compile(const stoker::v1::PipelineSpec& spec, const InputFormat& input, bool fuse) {
  PipelineOptions options;
  options.fuse_blur_chains = fuse;
  auto pipeline = Pipeline::Compile(spec, input, options);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  return std::move(*pipeline);
}

// Output bytes of `pipeline` on `sample` with sample `index`'s RNG, and the RNG's next draw
// after the run (the same when the run drew the same number of values).
struct Outcome {
  std::vector<uint8_t> bytes;
  uint64_t next_draw = 0;
};

Outcome RunSample(const Pipeline& pipeline, const SampleInput& sample, uint64_t index,
                  PipelineWorkspace* workspace) {
  Outcome outcome;
  outcome.bytes.resize(pipeline.output_bytes_per_sample());
  CounterRng rng = SampleRng(/*seed=*/3, /*epoch=*/2, index);
  const absl::Status status = pipeline.Run(sample, &rng, workspace, outcome.bytes.data());
  EXPECT_TRUE(status.ok()) << status;
  outcome.next_draw = rng.UniformInt(uint64_t{1} << 62);
  return outcome;
}

// Compiles `text` for `input` fused and unfused, checks that it fuses exactly when
// `expect_fused`, and compares the two on a few samples, reusing each side's workspace.
void ExpectSameAsUnfused(const std::string& text, const InputFormat& input,
                         const std::vector<SampleInput>& samples, bool expect_fused,
                         stoker::v1::DType dtype = stoker::v1::DTYPE_UNSPECIFIED,
                         stoker::v1::Layout layout = stoker::v1::LAYOUT_HWC) {
  stoker::v1::PipelineSpec spec = SpecFromText(text);
  spec.set_output_dtype(dtype);
  spec.set_output_layout(layout);
  const Pipeline fused = Compile(spec, input, true);
  const Pipeline unfused = Compile(spec, input, false);
  EXPECT_EQ(fused.fuses_blur_chains(), expect_fused) << text;
  EXPECT_FALSE(unfused.fuses_blur_chains()) << text;
  PipelineWorkspace fused_workspace, unfused_workspace;
  for (uint64_t index = 0; index < 3; ++index) {
    for (const SampleInput& sample : samples) {
      const Outcome a = RunSample(fused, sample, index, &fused_workspace);
      const Outcome b = RunSample(unfused, sample, index, &unfused_workspace);
      EXPECT_TRUE(a.bytes == b.bytes) << text << ", sample " << index;
      EXPECT_EQ(a.next_draw, b.next_draw) << text << ": the runs drew differently";
    }
  }
}

std::vector<uint8_t> Pixels(const ImageShape& shape, uint64_t key) {
  CounterRng rng(key);
  std::vector<uint8_t> pixels(shape.bytes());
  if (shape.type == PixelType::kUint8) {
    for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng.UniformInt(256));
    return pixels;
  }
  for (size_t i = 0; i < shape.elements(); ++i) {
    const float v = rng.UniformFloat();
    std::memcpy(pixels.data() + i * sizeof(float), &v, sizeof(float));
  }
  return pixels;
}

TEST(PipelineBlurChainTest, ReferenceWorkloadEqualsUnfused) {
  const ImageShape shape{224, 224, 3, PixelType::kUint8};
  std::vector<uint8_t> pixels = Pixels(shape, 1);
  ExpectSameAsUnfused("to_float, gaussian_blur(ksize=11)*10", InputFormat::Decoded(shape),
                      {SampleInput::Decoded(ImageView{pixels.data(), shape})}, true);
}

TEST(PipelineBlurChainTest, MixedChainsOddAndTinyImagesEqualUnfused) {
  // Fixed and drawn sigmas, radii 1 to 7, a ksize 17 blur (runs alone and splits the run), a run
  // longer than kMaxBlurChain, ops between runs; images shorter than the largest kernel.
  const std::string text =
      "to_float, gaussian_blur(ksize=3), gaussian_blur(ksize=15, sigma=1.5), "
      "gaussian_blur(ksize=5, sigma_min=0.5, sigma_max=3), gaussian_blur(ksize=17), "
      "gaussian_blur(ksize=7)*20, horizontal_flip, gaussian_blur(ksize=9), "
      "normalize(mean=[0.5,0.4,0.3], std=[0.2,0.3,0.4]), gaussian_blur(ksize=13)*2";
  for (const ImageShape& shape :
       {ImageShape{37, 29, 3, PixelType::kUint8}, ImageShape{9, 10, 3, PixelType::kUint8},
        ImageShape{13, 9, 3, PixelType::kUint8}}) {
    std::vector<uint8_t> pixels = Pixels(shape, shape.height);
    ExpectSameAsUnfused(text, InputFormat::Decoded(shape),
                        {SampleInput::Decoded(ImageView{pixels.data(), shape})}, true);
  }
}

TEST(PipelineBlurChainTest, FloatInputAndOutputConversionsEqualUnfused) {
  const ImageShape shape{31, 18, 3, PixelType::kFloat32};
  std::vector<uint8_t> pixels = Pixels(shape, 5);
  const std::vector<SampleInput> samples = {SampleInput::Decoded(ImageView{pixels.data(), shape})};
  const std::string text = "gaussian_blur(ksize=11)*3";
  ExpectSameAsUnfused(text, InputFormat::Decoded(shape), samples, true);
  ExpectSameAsUnfused(text, InputFormat::Decoded(shape), samples, true, stoker::v1::DTYPE_FLOAT16,
                      stoker::v1::LAYOUT_CHW);
  ExpectSameAsUnfused(text, InputFormat::Decoded(shape), samples, true, stoker::v1::DTYPE_UINT8);
  // One blur alone, or a blur after an op that is not to_float: nothing to fuse.
  ExpectSameAsUnfused("gaussian_blur(ksize=11)", InputFormat::Decoded(shape), samples, false);
  ExpectSameAsUnfused("gaussian_blur(ksize=17)*2", InputFormat::Decoded(shape), samples, false);
}

TEST(PipelineBlurChainTest, EncodedInputOfVaryingSizesEqualsUnfused) {
  std::vector<std::vector<uint8_t>> files;
  std::vector<SampleInput> samples;
  for (const auto& [h, w] : {std::pair<uint32_t, uint32_t>{40, 52}, {17, 9}, {8, 30}}) {
    std::vector<uint8_t> image = NaturalImage(h, w, 3, h * 100 + w);
    files.push_back(
        EncodeJpeg(ImageView{image.data(), ImageShape{h, w, 3, PixelType::kUint8}}, 90));
  }
  for (const std::vector<uint8_t>& file : files) samples.push_back(SampleInput::Encoded(file));
  ExpectSameAsUnfused("decode, to_float, gaussian_blur(ksize=11)*4, resize(height=16, width=16)",
                      InputFormat::Encoded(), samples, true);
}

TEST(PipelineBlurChainTest, ImageTooSmallFailsLikeUnfused) {
  // A 6-row image is too short for ksize 15 (ops[3]); the fused run names the same op.
  std::vector<uint8_t> image = NaturalImage(6, 20, 3, 9);
  const std::vector<uint8_t> file =
      EncodeJpeg(ImageView{image.data(), ImageShape{6, 20, 3, PixelType::kUint8}}, 90);
  const stoker::v1::PipelineSpec spec = SpecFromText(
      "decode, to_float, gaussian_blur(ksize=5), gaussian_blur(ksize=15), "
      "resize(height=4, width=4)");
  for (const bool fuse : {true, false}) {
    const Pipeline pipeline = Compile(spec, InputFormat::Encoded(), fuse);
    PipelineWorkspace workspace;
    std::vector<uint8_t> out(pipeline.output_bytes_per_sample());
    CounterRng rng = SampleRng(1, 0, 0);
    const absl::Status status =
        pipeline.Run(SampleInput::Encoded(file), &rng, &workspace, out.data());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(),
                HasSubstr("pipeline.ops[3] (gaussian_blur): ksize 15 needs an image taller"))
        << "fused " << fuse;
  }
}

TEST(PipelineBlurChainTest, TimingPutsTheChainOnItsFirstOp) {
  const ImageShape shape{24, 20, 3, PixelType::kUint8};
  std::vector<uint8_t> pixels = Pixels(shape, 2);
  const Pipeline pipeline =
      Compile(SpecFromText("to_float, gaussian_blur(ksize=5)*3, horizontal_flip"),
              InputFormat::Decoded(shape), true);
  PipelineWorkspace workspace;
  workspace.set_time_ops(true);
  RunSample(pipeline, SampleInput::Decoded(ImageView{pixels.data(), shape}), 0, &workspace);
  const std::vector<double>& seconds = workspace.op_seconds();
  ASSERT_EQ(seconds.size(), 5u);
  EXPECT_GT(seconds[0], 0.0);
  EXPECT_EQ(seconds[1], 0.0);
  EXPECT_EQ(seconds[2], 0.0);
  EXPECT_EQ(seconds[3], 0.0);
}

}  // namespace
}  // namespace stoker
