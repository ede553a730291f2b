// Pipelines compiled for encoded input: decode first, run-time sizes, fixed final size.

#include <cstdint>
#include <string>
#include <vector>

#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "augment/testing/spec_from_text.h"
#include "common/bad_sample.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status CompileEncoded(std::string_view text) {
  return Pipeline::Compile(SpecFromText(text), InputFormat::Encoded()).status();
}

std::vector<uint8_t> Jpeg(uint32_t height, uint32_t width, uint64_t seed) {
  const std::vector<uint8_t> pixels = NaturalImage(height, width, 3, seed);
  return EncodeJpeg(ImageView{const_cast<uint8_t*>(pixels.data()),
                              ImageShape{height, width, 3, PixelType::kUint8}},
                    90);
}

absl::Status RunOn(const Pipeline& pipeline, const std::vector<uint8_t>& bytes,
                   PipelineWorkspace* workspace, std::vector<uint8_t>* out, uint64_t index = 0) {
  out->assign(pipeline.output_bytes_per_sample(), 0);
  CounterRng rng = SampleRng(3, 0, index);
  return pipeline.Run(SampleInput::Encoded(bytes), &rng, workspace, out->data());
}

TEST(EncodedPipelineCompileTest, FirstOpMustBeDecode) {
  EXPECT_THAT(CompileEncoded("resize(height=8, width=8)"),
              ::testing::Property(&absl::Status::message,
                                  HasSubstr("pipeline.ops[0]: the dataset yields encoded images, "
                                            "so the first op must be decode")));
  EXPECT_EQ(CompileEncoded("").code(), absl::StatusCode::kInvalidArgument);
}

TEST(EncodedPipelineCompileTest, DecodeOnlyFirstAndOnlyForEncodedInput) {
  const absl::Status twice = CompileEncoded("decode, decode, center_crop(height=8, width=8)");
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.message()), HasSubstr("pipeline.ops[1] (decode): decode must be "
                                                      "the first op"));
  const absl::Status decoded =
      Pipeline::Compile(SpecFromText("decode"), ImageShape{8, 8, 3, PixelType::kUint8}).status();
  EXPECT_EQ(decoded.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(decoded.message()), HasSubstr("pipeline.ops[0] (decode)"));
}

TEST(EncodedPipelineCompileTest, FinalSizeMustBeFixed) {
  for (const char* text :
       {"decode", "decode, to_float, gaussian_blur(ksize=3)", "decode, resize(shorter=256)"}) {
    const absl::Status status = CompileEncoded(text);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(status.message()), HasSubstr("varies per sample")) << text;
  }
}

TEST(EncodedPipelineCompileTest, ChannelsAndTypeAreKnownAfterDecode) {
  EXPECT_THAT(std::string(CompileEncoded("decode(channels=1), center_crop(height=4, width=4), "
                                         "to_float, normalize(mean=[0,0,0], std=[1,1,1])")
                              .message()),
              HasSubstr("pipeline.ops[3] (normalize)"));
  EXPECT_THAT(std::string(CompileEncoded("decode, gaussian_blur(ksize=3)").message()),
              HasSubstr("pipeline.ops[1] (gaussian_blur): requires float32 input"));
  EXPECT_THAT(std::string(CompileEncoded("decode(channels=2)").message()),
              HasSubstr("pipeline.ops[0] (decode): channels must be 1 or 3, got 2"));
}

TEST(EncodedPipelineRunTest, ReferenceJpegPipeline) {
  auto pipeline = Pipeline::Compile(
      SpecFromText("decode, random_resized_crop(height=224, width=224), horizontal_flip, to_float, "
                   "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"),
      InputFormat::Encoded());
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_TRUE(pipeline->encoded_input());
  EXPECT_THAT(pipeline->BatchShape(4), ElementsAre(4, 224, 224, 3));
  PipelineWorkspace workspace;
  std::vector<uint8_t> first, again;
  const std::vector<uint8_t> jpeg = Jpeg(375, 500, 1);
  ASSERT_TRUE(RunOn(*pipeline, jpeg, &workspace, &first, 5).ok());
  // Different sizes in a row; the same sample again gives the same bytes.
  ASSERT_TRUE(RunOn(*pipeline, Jpeg(300, 200, 2), &workspace, &again).ok());
  ASSERT_TRUE(RunOn(*pipeline, jpeg, &workspace, &again, 5).ok());
  EXPECT_EQ(first, again);
  const size_t capacity = workspace.buffer(0).capacity_bytes();
  ASSERT_TRUE(RunOn(*pipeline, jpeg, &workspace, &again, 6).ok());
  EXPECT_EQ(workspace.buffer(0).capacity_bytes(), capacity);
}

TEST(EncodedPipelineRunTest, BadBytesAreBadSamplesNamingDecode) {
  auto pipeline = Pipeline::Compile(SpecFromText("decode, center_crop(height=8, width=8)"),
                                    InputFormat::Encoded());
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out;
  const absl::Status status = RunOn(*pipeline, {'B', 'M', 0, 0}, &workspace, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BadSampleReasonOf(status), BadSampleReason::kUnsupportedFormat);
  EXPECT_THAT(std::string(status.message()), HasSubstr("pipeline.ops[0] (decode): not a JPEG"));
}

TEST(EncodedPipelineRunTest, ImageSmallerThanCropFailsAtRunTime) {
  auto pipeline = Pipeline::Compile(SpecFromText("decode, center_crop(height=64, width=64)"),
                                    InputFormat::Encoded());
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PipelineWorkspace workspace;
  std::vector<uint8_t> out;
  const absl::Status status = RunOn(*pipeline, Jpeg(48, 80, 3), &workspace, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("pipeline.ops[1] (center_crop): height 64 exceeds the input height 48"));
}

TEST(EncodedPipelineRunTest, DctDownscaleBeforeAShrinkingResizeStaysClose) {
  // 4x shrink: decode runs at 1/4 scale; compare with a full decode followed by area resize.
  const std::vector<uint8_t> jpeg = Jpeg(400, 400, 4);
  auto scaled =
      Pipeline::Compile(SpecFromText("decode, resize(height=100, width=100, interpolation=1)"),
                        InputFormat::Encoded());
  auto full = Pipeline::Compile(
      SpecFromText("decode, center_crop(height=400, width=400), resize(height=100, width=100, "
                   "interpolation=1)"),
      InputFormat::Encoded());
  ASSERT_TRUE(scaled.ok() && full.ok());
  PipelineWorkspace scaled_workspace, full_workspace;
  std::vector<uint8_t> a, b;
  ASSERT_TRUE(RunOn(*scaled, jpeg, &scaled_workspace, &a).ok());
  ASSERT_TRUE(RunOn(*full, jpeg, &full_workspace, &b).ok());
  EXPECT_LT(scaled_workspace.buffer(0).capacity_bytes(), 200u * 200 * 3);  // Decoded at 1/4.
  double total = 0;
  for (size_t i = 0; i < a.size(); ++i) total += std::abs(a[i] - b[i]);
  EXPECT_LT(total / a.size(), 3.0);
}

}  // namespace
}  // namespace stoker
