// ExplainPipeline: shapes and dtypes per op, the table's layout, measured costs, errors naming
// the op and field.
#include "augment/pipeline_explain.h"

#include <string>
#include <vector>

#include "augment/pipeline_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

stoker::v1::PipelineSpec Spec(const std::string& text) {
  auto spec = ParsePipelineText(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : stoker::v1::PipelineSpec();
}

constexpr char kRecipe[] =
    "decode, random_resized_crop(height=224, width=224), horizontal_flip, to_float, "
    "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225]), "
    "mixup(alpha=0.8, num_classes=1000)";

TEST(PipelineExplainTest, ShapesOnlyTableIsExact) {
  ExplainOptions options;
  options.runs = 0;
  auto spec = Spec(kRecipe);
  spec.set_output_layout(stoker::v1::LAYOUT_CHW);
  auto explanation = ExplainPipeline(spec, options);
  ASSERT_TRUE(explanation.ok()) << explanation.status();
  EXPECT_EQ(FormatExplanation(*explanation),
            "input: 375x500x3 uint8 (encoded: a JPEG of that size, quality 90)\n"
            "  #  op                     output                     us/image    ns/out elem\n"
            "  0  decode                 375x500x3 uint8                   -              -\n"
            "  1  random_resized_crop    224x224x3 uint8                   -              -\n"
            "  2  horizontal_flip        224x224x3 uint8                   -              -\n"
            "  3  to_float               224x224x3 float32                 -              -\n"
            "  4  normalize              224x224x3 float32                 -              -\n"
            "  b  batch_mix              + soft labels [N,1000]            -              -\n"
            "     batch_mix: mixup(alpha=0.8) per batch\n"
            "output per sample: 3x224x224 float32 CHW, 602112 bytes\n"
            "costs: not measured\n"
            "decoded prefix: op 0 (decode), fingerprint 0x706ce9ea12a865dd\n"
            "  one cached entry: 375x500x3 uint8, 562500 bytes\n"
            "decoded cache: costs not measured\n");
}

TEST(PipelineExplainTest, DecodeShowsTheDctDownscaleBeforeAResize) {
  ExplainOptions options;
  options.runs = 0;
  options.input = ImageShape{800, 1200, 3, PixelType::kUint8};
  auto explanation = ExplainPipeline(Spec("decode, resize(height=110, width=160)"), options);
  ASSERT_TRUE(explanation.ok()) << explanation.status();
  EXPECT_EQ(explanation->ops[0].output, (ImageShape{200, 300, 3, PixelType::kUint8}));
  EXPECT_EQ(explanation->ops[1].output, (ImageShape{110, 160, 3, PixelType::kUint8}));
}

TEST(PipelineExplainTest, MeasuresEveryOpAndTheBatchStage) {
  ExplainOptions options;
  options.runs = 3;
  options.input = ImageShape{64, 80, 3, PixelType::kUint8};
  auto explanation = ExplainPipeline(
      Spec("to_float, gaussian_blur(ksize=5), cutmix(alpha=1.0, num_classes=10)"), options);
  ASSERT_TRUE(explanation.ok()) << explanation.status();
  ASSERT_EQ(explanation->ops.size(), 2u);
  for (const ExplainedOp& op : explanation->ops) EXPECT_GE(op.seconds, 0.0) << op.name;
  EXPECT_GE(explanation->batch_stage_seconds, 0.0);
  EXPECT_GT(explanation->total_seconds, 0.0);
  const std::string text = FormatExplanation(*explanation);
  EXPECT_THAT(text, ContainsRegex("  1  gaussian_blur +64x80x3 float32 +[0-9]+\\.[0-9] +"
                                  "[0-9]+\\.[0-9][0-9]\n"));
  EXPECT_THAT(text, ContainsRegex("total: [0-9.]+ us/image \\(ops, output conversion, batch "
                                  "stage\\) = [0-9]+ images/s per core\n"));
  EXPECT_THAT(text, HasSubstr("costs: measured on this machine, median of 3 runs"));
}

TEST(PipelineExplainTest, TimesOnTheOptionsClock) {
  SteppingClock clock(absl::Milliseconds(1));
  ExplainOptions options;
  options.runs = 3;
  options.input = ImageShape{64, 80, 3, PixelType::kUint8};
  options.clock = &clock;
  auto explanation = ExplainPipeline(
      Spec("to_float, gaussian_blur(ksize=5), cutmix(alpha=1.0, num_classes=10)"), options);
  ASSERT_TRUE(explanation.ok()) << explanation.status();
  ASSERT_EQ(explanation->ops.size(), 2u);
  // A run reads the clock three times after its start: twice for the fused to_float + blur
  // chain (its time on its first op), once to end.
  EXPECT_DOUBLE_EQ(explanation->ops[0].seconds, 0.001);
  EXPECT_DOUBLE_EQ(explanation->ops[1].seconds, 0.0);
  EXPECT_DOUBLE_EQ(explanation->total_seconds, 0.003);
  EXPECT_DOUBLE_EQ(explanation->batch_stage_seconds, 0.001 / 16);
}

// The decoded prefix's lines and the planner's verdict: their shape, not their timings.
TEST(PipelineExplainTest, ShowsTheDecodedPrefixAndThePlannersView) {
  ExplainOptions options;
  options.runs = 3;
  options.input = ImageShape{120, 160, 3, PixelType::kUint8};
  auto fused = ExplainPipeline(
      Spec("decode, random_resized_crop(height=64, width=64), horizontal_flip"), options);
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_TRUE(fused->prefix.has_value());
  EXPECT_EQ(fused->prefix->prefix_ops, 1u);
  EXPECT_EQ(fused->prefix->compared_ops, 2u);
  EXPECT_EQ(fused->prefix->entry, options.input);
  const std::string verdict =
      "decoded cache: (worth it from epoch [0-9]+|not worth it): a hit costs [0-9]+\\.[0-9]{3} "
      "ms, ";
  // Under 3 ns of decode CPU per byte kept (a small image decodes fast), a line says so.
  const std::string admission =
      "(  admission: decoded_cache=on keeps no entry \\([0-9.]+ ns of decode CPU per byte kept, "
      "under 3\\); decoded_cache=always keeps them\n)?";
  const std::string fused_text = FormatExplanation(*fused);
  EXPECT_THAT(fused_text,
              ContainsRegex("\ndecoded prefix: op 0 \\(decode\\), fingerprint 0x[0-9a-f]{16}\n"
                            "  one cached entry: 120x160x3 uint8, 57600 bytes\n"
                            "  miss \\(the prefix, epoch 1\\): [0-9.]+ us/image, [0-9.]+ ns of "
                            "decode CPU per byte kept\n"
                            "  hit \\(copy the entry, then op 1 \\(random_resized_crop\\) on "
                            "it\\): [0-9.]+ us/image\n"
                            "  without the cache \\(ops 0-1 \\(decode, random_resized_crop\\), "
                            "fused\\): [0-9.]+ us/image\n"));
  // random_resized_crop's default (bilinear) window may be decoded at a DCT scale: AUTO stays off.
  EXPECT_FALSE(fused->prefix->auto_may_cache);
  EXPECT_THAT(fused_text,
              ContainsRegex(verdict + "the fused decode\\+crop [0-9]+\\.[0-9]{3} ms\n" + admission +
                            "  auto \\(the default\\): off: the fused decode may "
                            "decode the window at a DCT scale"));
  auto resized = ExplainPipeline(
      Spec("decode, resize(shorter=72), center_crop(height=64, width=64), to_float"), options);
  ASSERT_TRUE(resized.ok()) << resized.status();
  const std::string resized_text = FormatExplanation(*resized);
  EXPECT_THAT(resized_text,
              ContainsRegex("\ndecoded prefix: ops 0-2 \\(decode, resize, center_crop\\), "
                            "fingerprint 0x[0-9a-f]{16}\n  one cached entry: 64x64x3 uint8, "
                            "12288 bytes\n"));
  EXPECT_THAT(resized_text, HasSubstr("  hit (copy the entry): "));
  EXPECT_TRUE(resized->prefix->auto_may_cache);
  EXPECT_THAT(resized_text,
              ContainsRegex(verdict + "decoding again [0-9]+\\.[0-9]{3} ms\n" + admission +
                            "  auto \\(the default\\): each worker "
                            "with a cache times"));
  // Decoded input has no prefix to show.
  auto decoded = ExplainPipeline(Spec("to_float"), options);
  ASSERT_TRUE(decoded.ok());
  EXPECT_FALSE(decoded->prefix.has_value());
}

TEST(PipelineExplainTest, ErrorsNameTheOpAndField) {
  ExplainOptions options;
  options.runs = 0;
  options.input = ImageShape{16, 16, 3, PixelType::kUint8};
  auto bad = ExplainPipeline(Spec("to_float, gaussian_blur(ksize=4)"), options);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("pipeline.ops[1] (gaussian_blur): ksize must be odd"));
  options.input = ImageShape{100, 100, 3, PixelType::kUint8};
  auto too_small = ExplainPipeline(Spec("decode, center_crop(height=200, width=200)"), options);
  EXPECT_EQ(too_small.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_small.status().message(),
              HasSubstr("running on a 100x100x3 image: pipeline.ops[1] (center_crop)"));
  EXPECT_EQ(ParseInputShape("10x10", "--input").status().message(),
            "--input: expected HxWxC (height and width 1..16384, C 1 or 3), got '10x10'");
}

}  // namespace
}  // namespace stoker
