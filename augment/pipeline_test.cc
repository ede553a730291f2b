#include "augment/pipeline.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "augment/kernels/gaussian_blur.h"
#include "augment/pipeline_text.h"
#include "augment/testing/spec_from_text.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ImageShape kSource{24, 32, 3, PixelType::kUint8};

// A random uint8 image of `shape`, the same for the same key.
std::vector<uint8_t> SourcePixels(const ImageShape& shape, uint64_t key) {
  CounterRng rng(key);
  std::vector<uint8_t> pixels(shape.elements());
  for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng.UniformInt(256));
  return pixels;
}

// Runs `pipeline` on `source` with the sample RNG of `index`; returns the output bytes.
std::vector<uint8_t> RunOnce(const Pipeline& pipeline, std::vector<uint8_t>& source, uint64_t index,
                             PipelineWorkspace* workspace) {
  std::vector<uint8_t> out(pipeline.output_bytes_per_sample() + 8);
  CounterRng rng = SampleRng(/*seed=*/7, /*epoch=*/1, index);
  const absl::Status status =
      pipeline.Run(ImageView{source.data(), pipeline.input_shape()}, &rng, workspace, out.data());
  EXPECT_TRUE(status.ok()) << status;
  out.resize(pipeline.output_bytes_per_sample());
  return out;
}

absl::Status CompileStatus(std::string_view text, const ImageShape& shape = kSource) {
  return Pipeline::Compile(SpecFromText(text), shape).status();
}

TEST(PipelineCompileTest, ShapesTypesAndDefaults) {
  auto pipeline = Pipeline::Compile(
      SpecFromText("to_float, gaussian_blur(ksize=5)*2, random_crop(height=20, width=16), "
                   "horizontal_flip, normalize(mean=[0.5,0.5,0.5], std=[0.2,0.2,0.2])"),
      kSource);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ(pipeline->input_shape(), kSource);
  EXPECT_EQ(pipeline->result_shape(), (ImageShape{20, 16, 3, PixelType::kFloat32}));
  EXPECT_EQ(pipeline->output_layout(), stoker::v1::LAYOUT_HWC);
  EXPECT_EQ(pipeline->output_dtype(), stoker::v1::DTYPE_FLOAT32);
  EXPECT_EQ(pipeline->output_bytes_per_sample(), 20u * 16 * 3 * 4);
  EXPECT_THAT(pipeline->BatchShape(8), ElementsAre(8, 20, 16, 3));
}

TEST(PipelineCompileTest, ChwAndUint8Output) {
  stoker::v1::PipelineSpec spec = SpecFromText("random_crop(height=10, width=12)");
  spec.set_output_layout(stoker::v1::LAYOUT_CHW);
  auto pipeline = Pipeline::Compile(spec, kSource);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ(pipeline->output_dtype(), stoker::v1::DTYPE_UINT8);
  EXPECT_EQ(pipeline->output_bytes_per_sample(), 10u * 12 * 3);
  EXPECT_THAT(pipeline->BatchShape(2), ElementsAre(2, 3, 10, 12));
}

TEST(PipelineCompileTest, EmptyOpListIsAllowed) {
  auto pipeline = Pipeline::Compile(stoker::v1::PipelineSpec(), kSource);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ(pipeline->result_shape(), kSource);
  EXPECT_EQ(pipeline->output_dtype(), stoker::v1::DTYPE_UINT8);
}

TEST(PipelineCompileTest, UnsetOp) {
  stoker::v1::PipelineSpec spec = SpecFromText("to_float");
  spec.add_ops();
  const absl::Status status = Pipeline::Compile(spec, kSource).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[1]: no op set (one of: decode, resize"));
}

TEST(PipelineCompileTest, EvenKsize) {
  const absl::Status status = CompileStatus(
      "to_float, random_crop(height=20,width=20), "
      "horizontal_flip, gaussian_blur(ksize=4)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4");
}

TEST(PipelineCompileTest, NegativeKsize) {
  const absl::Status status = CompileStatus("to_float, gaussian_blur(ksize=-3)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[1] (gaussian_blur): ksize must be odd "
                                          "and > 0, got -3"));
}

TEST(PipelineCompileTest, BlurOnUint8SuggestsToFloat) {
  const absl::Status status = CompileStatus("gaussian_blur(ksize=3)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[0] (gaussian_blur): requires float32 "
                                          "input, got uint8 (add to_float before it)"));
}

TEST(PipelineCompileTest, CropLargerThanInput) {
  const absl::Status status = CompileStatus("random_crop(height=10, width=33)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("pipeline.ops[0] (random_crop): width 33 exceeds the input width 32"));
  const absl::Status zero = CompileStatus("random_crop(width=3)");
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("(random_crop): height must be > 0, got 0"));
}

TEST(PipelineCompileTest, CropPropagatesShapeToLaterOps) {
  // Blurring after a 4x4 crop with ksize 11 is rejected at the blur.
  const absl::Status status =
      CompileStatus("to_float, random_crop(height=4, width=4), gaussian_blur(ksize=11)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[2] (gaussian_blur): ksize 11"));
}

TEST(PipelineCompileTest, NormalizeWrongChannelCount) {
  const absl::Status status = CompileStatus("to_float, normalize(mean=[0.5,0.5], std=[1,1])");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[1] (normalize): mean has 2 values but "
                                          "the image has 3 channels"));
}

TEST(PipelineCompileTest, NormalizeZeroStd) {
  const absl::Status status = CompileStatus("to_float, normalize(mean=[0,0,0], std=[1,0,1])");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[1] (normalize): std[1] must be > 0"));
}

TEST(PipelineCompileTest, NormalizeOnUint8) {
  const absl::Status status = CompileStatus("normalize(mean=[0,0,0], std=[1,1,1])");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("requires float32 input, got uint8"));
}

TEST(PipelineCompileTest, BadLayoutDtypeAndShape) {
  stoker::v1::PipelineSpec spec;
  spec.set_output_layout(static_cast<stoker::v1::Layout>(9));
  EXPECT_EQ(Pipeline::Compile(spec, kSource).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Pipeline::Compile(spec, kSource).status().message()),
              HasSubstr("pipeline.output_layout"));
  spec.clear_output_layout();
  spec.set_output_dtype(static_cast<stoker::v1::DType>(9));
  EXPECT_THAT(std::string(Pipeline::Compile(spec, kSource).status().message()),
              HasSubstr("pipeline.output_dtype"));
  const absl::Status empty =
      Pipeline::Compile(stoker::v1::PipelineSpec(), ImageShape{0, 4, 3, PixelType::kUint8})
          .status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("is empty"));
}

TEST(PipelineRunTest, EmptyPipelineCopiesAndConverts) {
  std::vector<uint8_t> source = {1, 2, 3, 4, 5, 6};  // 1x2, 3 channels.
  const ImageShape shape{1, 2, 3, PixelType::kUint8};
  PipelineWorkspace workspace;
  auto copy = Pipeline::Compile(stoker::v1::PipelineSpec(), shape);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(RunOnce(*copy, source, 0, &workspace), source);

  stoker::v1::PipelineSpec spec;
  spec.set_output_layout(stoker::v1::LAYOUT_CHW);
  spec.set_output_dtype(stoker::v1::DTYPE_FLOAT32);
  auto chw = Pipeline::Compile(spec, shape);
  ASSERT_TRUE(chw.ok());
  const std::vector<uint8_t> bytes = RunOnce(*chw, source, 0, &workspace);
  std::vector<float> floats(6);
  std::memcpy(floats.data(), bytes.data(), bytes.size());
  EXPECT_THAT(floats, ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(PipelineRunTest, ToFloatThenUint8OutputRoundTrips) {
  // to_float gives x/255; the uint8 output casts without rescaling, so 0 and 255 map to 0 and 1.
  std::vector<uint8_t> source = {0, 255, 128, 255};
  stoker::v1::PipelineSpec spec = SpecFromText("to_float");
  spec.set_output_dtype(stoker::v1::DTYPE_UINT8);
  auto pipeline = Pipeline::Compile(spec, ImageShape{2, 2, 1, PixelType::kUint8});
  ASSERT_TRUE(pipeline.ok());
  PipelineWorkspace workspace;
  EXPECT_THAT(RunOnce(*pipeline, source, 0, &workspace), ElementsAre(0, 1, 1, 1));
}

TEST(PipelineRunTest, FixedSigmaBlurMatchesKernel) {
  std::vector<uint8_t> source = SourcePixels(kSource, 1);
  auto pipeline =
      Pipeline::Compile(SpecFromText("to_float, gaussian_blur(ksize=5, sigma=1.5)"), kSource);
  ASSERT_TRUE(pipeline.ok());
  PipelineWorkspace workspace;
  const std::vector<uint8_t> bytes = RunOnce(*pipeline, source, 0, &workspace);

  const ImageShape shape{24, 32, 3, PixelType::kFloat32};
  std::vector<float> in(shape.elements()), expected(shape.elements());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(source[i]) / 255.0f;
  float w[5];
  GaussianKernel1D(5, 1.5f, w);
  std::vector<float> scratch(GaussianBlurScratchFloats(shape, 5));
  GaussianBlur(ImageView{in.data(), shape}, w, 5, scratch.data(),
               ImageView{expected.data(), shape});
  ASSERT_EQ(bytes.size(), expected.size() * 4);
  EXPECT_EQ(std::memcmp(bytes.data(), expected.data(), bytes.size()), 0);
}

// The number of RNG draws one run of the pipeline `text` makes on a kSource image.
uint64_t DrawsOf(std::string_view text) {
  std::vector<uint8_t> source = SourcePixels(kSource, 2);
  auto pipeline = Pipeline::Compile(SpecFromText(text), kSource);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  if (!pipeline.ok()) return 0;
  PipelineWorkspace workspace;
  std::vector<uint8_t> out(pipeline->output_bytes_per_sample());
  CounterRng rng(1234);
  EXPECT_TRUE(pipeline->Run(ImageView{source.data(), kSource}, &rng, &workspace, out.data()).ok());
  return rng.counter();
}

TEST(PipelineRunTest, RngDrawCountsFollowTheContract) {
  EXPECT_EQ(DrawsOf("to_float, gaussian_blur(ksize=3), gaussian_blur(ksize=3, sigma=1), "
                    "random_crop(height=8, width=8), horizontal_flip(p=0), "
                    "normalize(mean=[0,0,0], std=[1,1,1])"),
            1u + 2u + 1u);  // Sampled sigma, top and left, flip coin.
  // Full-area crops at ratio 1 never fit a 24 x 32 image: 10 attempts of 2 draws, then the
  // fallback without draws. color_jitter: 2 for the order, 3 factors, even when disabled.
  EXPECT_EQ(DrawsOf("random_resized_crop(height=8, width=8, scale_min=1, scale_max=1, "
                    "ratio_min=1, ratio_max=1), color_jitter"),
            20u + 5u);
}

// Each random op, and all of them together: the same key gives the same bytes, other sample
// indices give other bytes.
TEST(PipelineRunTest, DeterministicPerSample) {
  const char* const kPipelines[] = {
      "to_float, gaussian_blur(ksize=5)",
      "random_crop(height=16, width=16)",
      "horizontal_flip",
      "random_resized_crop(height=12, width=12)",
      "color_jitter(brightness=0.4, contrast=0.4, saturation=0.4)",
      "to_float, color_jitter(brightness=0.4, contrast=0.4, saturation=0.4), grayscale(channels=3)",
      "to_float, gaussian_blur(ksize=3)*3, random_crop(height=20, width=20), horizontal_flip, "
      "normalize(mean=[0.4,0.5,0.6], std=[0.2,0.25,0.3])",
  };
  for (const char* text : kPipelines) {
    SCOPED_TRACE(text);
    std::vector<uint8_t> source = SourcePixels(kSource, 3);
    auto pipeline = Pipeline::Compile(SpecFromText(text), kSource);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    PipelineWorkspace workspace, other_workspace;
    const std::vector<uint8_t> first = RunOnce(*pipeline, source, 5, &workspace);
    EXPECT_EQ(RunOnce(*pipeline, source, 5, &workspace), first);
    EXPECT_EQ(RunOnce(*pipeline, source, 5, &other_workspace), first);
    int different = 0;
    for (uint64_t index = 6; index < 38; ++index) {
      different += RunOnce(*pipeline, source, index, &workspace) != first;
    }
    EXPECT_GE(different, 8);  // Of 32; a fair flip coin alone gives ~16.
  }
}

TEST(PipelineRunTest, SourceIsNotModifiedAndWorkspaceStopsGrowing) {
  std::vector<uint8_t> source = SourcePixels(kSource, 4);
  const std::vector<uint8_t> original = source;
  auto pipeline = Pipeline::Compile(
      SpecFromText(
          "to_float, gaussian_blur(ksize=5)*4, horizontal_flip(p=1), normalize(mean=[0,0,0], "
          "std=[1,1,1])"),
      kSource);
  ASSERT_TRUE(pipeline.ok());
  PipelineWorkspace workspace;
  RunOnce(*pipeline, source, 0, &workspace);
  EXPECT_EQ(source, original);
  const void* data[3] = {workspace.buffer(0).view().data, workspace.buffer(1).view().data,
                         workspace.scratch().view().data};
  for (uint64_t index = 1; index < 5; ++index) RunOnce(*pipeline, source, index, &workspace);
  EXPECT_EQ(workspace.buffer(0).view().data, data[0]);
  EXPECT_EQ(workspace.buffer(1).view().data, data[1]);
  EXPECT_EQ(workspace.scratch().view().data, data[2]);
}

TEST(PipelineRunTest, UnalignedFloatOutputGivesTheSameBytes) {
  std::vector<uint8_t> source = SourcePixels(kSource, 5);
  stoker::v1::PipelineSpec spec = SpecFromText("to_float, horizontal_flip");
  for (stoker::v1::Layout layout : {stoker::v1::LAYOUT_HWC, stoker::v1::LAYOUT_CHW}) {
    spec.set_output_layout(layout);
    auto pipeline = Pipeline::Compile(spec, kSource);
    ASSERT_TRUE(pipeline.ok());
    PipelineWorkspace workspace;
    const std::vector<uint8_t> aligned = RunOnce(*pipeline, source, 9, &workspace);
    std::vector<uint8_t> buffer(pipeline->output_bytes_per_sample() + 16);
    uint8_t* unaligned = buffer.data() + 1;
    CounterRng rng = SampleRng(7, 1, 9);
    ASSERT_TRUE(pipeline->Run(ImageView{source.data(), kSource}, &rng, &workspace, unaligned).ok());
    EXPECT_EQ(std::memcmp(unaligned, aligned.data(), aligned.size()), 0);
  }
}

TEST(PipelineRunTest, ChwFloatOutputIsTransposedHwc) {
  std::vector<uint8_t> source = SourcePixels(kSource, 6);
  stoker::v1::PipelineSpec spec = SpecFromText("to_float, gaussian_blur(ksize=3, sigma=1)");
  auto hwc = Pipeline::Compile(spec, kSource);
  spec.set_output_layout(stoker::v1::LAYOUT_CHW);
  auto chw = Pipeline::Compile(spec, kSource);
  ASSERT_TRUE(hwc.ok() && chw.ok());
  PipelineWorkspace workspace;
  std::vector<float> a(kSource.elements()), b(kSource.elements());
  const std::vector<uint8_t> a_bytes = RunOnce(*hwc, source, 0, &workspace);
  const std::vector<uint8_t> b_bytes = RunOnce(*chw, source, 0, &workspace);
  std::memcpy(a.data(), a_bytes.data(), a_bytes.size());
  std::memcpy(b.data(), b_bytes.data(), b_bytes.size());
  const size_t plane = size_t{kSource.height} * kSource.width;
  for (size_t p = 0; p < plane; ++p) {
    for (size_t c = 0; c < 3; ++c) ASSERT_EQ(b[c * plane + p], a[p * 3 + c]);
  }
}

TEST(PipelineRunTest, WrongInputShape) {
  auto pipeline = Pipeline::Compile(SpecFromText("to_float"), kSource);
  ASSERT_TRUE(pipeline.ok());
  std::vector<uint8_t> source(kSource.elements()), out(pipeline->output_bytes_per_sample());
  PipelineWorkspace workspace;
  CounterRng rng(1);
  const absl::Status status =
      pipeline->Run(ImageView{source.data(), ImageShape{24, 31, 3, PixelType::kUint8}}, &rng,
                    &workspace, out.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("compiled for 24x32x3 uint8"));
}

TEST(PipelineRunTest, TimesEachOpWhenAsked) {
  auto pipeline = Pipeline::Compile(
      SpecFromText("to_float, gaussian_blur(ksize=5)*2, horizontal_flip"), kSource);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  ASSERT_EQ(pipeline->num_ops(), 4u);
  EXPECT_EQ(pipeline->op_name(1), "gaussian_blur");
  std::vector<uint8_t> source = SourcePixels(kSource, 3);
  PipelineWorkspace workspace;
  RunOnce(*pipeline, source, 0, &workspace);
  EXPECT_TRUE(workspace.op_seconds().empty());  // Off by default.

  workspace.set_time_ops(true);
  const std::vector<uint8_t> timed = RunOnce(*pipeline, source, 0, &workspace);
  ASSERT_EQ(workspace.op_seconds().size(), 4u);
  for (double seconds : workspace.op_seconds()) EXPECT_GE(seconds, 0.0);
  PipelineWorkspace untimed;
  EXPECT_EQ(timed, RunOnce(*pipeline, source, 0, &untimed));  // Timing changes nothing.
}

TEST(PipelineRunTest, TimesOpsOnTheWorkspacesClock) {
  auto pipeline = Pipeline::Compile(
      SpecFromText("to_float, gaussian_blur(ksize=5)*2, horizontal_flip"), kSource);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  std::vector<uint8_t> source = SourcePixels(kSource, 3);
  SteppingClock clock(absl::Milliseconds(1));
  PipelineWorkspace workspace;
  workspace.set_time_ops(true, &clock);
  RunOnce(*pipeline, source, 0, &workspace);
  // Two reads per run of ops: to_float and the blurs run as one fused chain, whose time is on its
  // first op; then the flip.
  EXPECT_THAT(workspace.op_seconds(), ElementsAre(DoubleEq(0.001), 0.0, 0.0, DoubleEq(0.001)));
}

}  // namespace
}  // namespace stoker
