#include "augment/pipeline_text.h"

#include <string>

#include "augment/op_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void ExpectInvalid(std::string_view text, std::string_view message_part) {
  auto spec = ParsePipelineText(text);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr(std::string(message_part))) << text;
}

TEST(ParsePipelineTextTest, ReferenceWorkload) {
  auto spec = ParsePipelineText(
      "to_float, gaussian_blur(ksize=11)*10, random_crop(height=200,width=200), "
      "horizontal_flip(p=0.5), normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->ops_size(), 14);
  EXPECT_TRUE(spec->ops(0).has_to_float());
  for (int i = 1; i <= 10; ++i) {
    ASSERT_TRUE(spec->ops(i).has_gaussian_blur());
    EXPECT_EQ(spec->ops(i).gaussian_blur().ksize(), 11);
    EXPECT_EQ(spec->ops(i).gaussian_blur().sigma(), 0.0f);
  }
  EXPECT_EQ(spec->ops(11).random_crop().height(), 200u);
  EXPECT_EQ(spec->ops(11).random_crop().width(), 200u);
  ASSERT_TRUE(spec->ops(12).horizontal_flip().has_p());
  EXPECT_EQ(spec->ops(12).horizontal_flip().p(), 0.5f);
  EXPECT_THAT(spec->ops(13).normalize().mean(), ElementsAre(0.485f, 0.456f, 0.406f));
  EXPECT_THAT(spec->ops(13).normalize().std(), ElementsAre(0.229f, 0.224f, 0.225f));
  EXPECT_EQ(spec->output_layout(), stoker::v1::LAYOUT_UNSPECIFIED);
  EXPECT_EQ(spec->output_dtype(), stoker::v1::DTYPE_UNSPECIFIED);
}

TEST(ParsePipelineTextTest, WhitespaceEmptyParenthesesAndDefaults) {
  auto spec = ParsePipelineText(
      "  to_float() ,horizontal_flip ,\n gaussian_blur ( ksize = 3 , sigma = 1e-1 ) * 2 ,"
      "normalize(mean=[ ], std=[])");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->ops_size(), 5);
  EXPECT_TRUE(spec->ops(0).has_to_float());
  EXPECT_TRUE(spec->ops(1).has_horizontal_flip());
  EXPECT_FALSE(spec->ops(1).horizontal_flip().has_p());  // Unset: the op's default 0.5.
  EXPECT_EQ(spec->ops(3).gaussian_blur().sigma(), 0.1f);
  EXPECT_TRUE(spec->ops(4).has_normalize());
  EXPECT_EQ(spec->ops(4).normalize().mean_size(), 0);
}

TEST(ParsePipelineTextTest, CombinatorsTakeNestedOpLists) {
  auto spec = ParsePipelineText(
      "random_apply(ops=[color_jitter(brightness=0.4), invert*2], p=0.8), "
      "random_choice(ops=[random_order(ops=[vertical_flip, rand_augment(num_ops=1)])], p=[2]), "
      "random_order(ops=[])");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->ops_size(), 3);
  const auto& apply = spec->ops(0).random_apply();
  ASSERT_EQ(apply.ops_size(), 3);
  EXPECT_EQ(apply.ops(0).color_jitter().brightness(), 0.4f);
  EXPECT_TRUE(apply.ops(1).has_invert());
  EXPECT_TRUE(apply.ops(2).has_invert());
  EXPECT_EQ(apply.p(), 0.8f);
  const auto& choice = spec->ops(1).random_choice();
  EXPECT_THAT(choice.p(), ElementsAre(2.0f));
  const auto& order = choice.ops(0).random_order();
  ASSERT_EQ(order.ops_size(), 2);
  EXPECT_EQ(order.ops(1).rand_augment().num_ops(), 1u);
  EXPECT_EQ(spec->ops(2).random_order().ops_size(), 0);
}

TEST(ParsePipelineTextTest, OpListErrorsNameTheArgument) {
  ExpectInvalid("random_apply(ops=invert)", "random_apply.ops: expected a list of ops");
  ExpectInvalid("random_apply(ops=[blur])", "column 19: unknown op 'blur'");
  ExpectInvalid("random_apply(ops=[invert(q=1)])", "invert has no argument 'q'");
  ExpectInvalid("random_apply(ops=[invert", "expected ','");
  std::string deep = "invert";
  for (int i = 0; i < 9; ++i) deep = "random_apply(ops=[" + deep + "])";
  ExpectInvalid(deep, "nested more than 8 deep");
}

TEST(ParsePipelineTextTest, EmptyTextHasNoOps) {
  auto spec = ParsePipelineText("");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->ops_size(), 0);
  auto blank = ParsePipelineText("   ");
  ASSERT_TRUE(blank.ok());
  EXPECT_EQ(blank->ops_size(), 0);
}

TEST(ParsePipelineTextTest, NegativeIntegersReachCompile) {
  auto spec = ParsePipelineText("gaussian_blur(ksize=-3)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->ops(0).gaussian_blur().ksize(), -3);
}

TEST(ParsePipelineTextTest, RepeatCounts) {
  auto spec = ParsePipelineText("horizontal_flip*1000");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->ops_size(), 1000);
  ExpectInvalid("horizontal_flip*0",
                "repeat count of horizontal_flip must be an integer in "
                "1..1000, got '0'");
  ExpectInvalid("horizontal_flip*1001", "got '1001'");
  ExpectInvalid("horizontal_flip*x", "got 'x'");
  ExpectInvalid("horizontal_flip*", "got end of text");
}

TEST(ParsePipelineTextTest, UnknownOp) {
  ExpectInvalid("to_float, blur(ksize=3)",
                "column 11: unknown op 'blur'; known ops: decode, resize, center_crop, "
                "random_resized_crop, to_float, gaussian_blur, random_crop, horizontal_flip, "
                "normalize, color_jitter, grayscale");
}

TEST(ParsePipelineTextTest, UnknownOrRepeatedArg) {
  ExpectInvalid("gaussian_blur(k=3)",
                "gaussian_blur has no argument 'k'; its arguments: ksize, sigma, sigma_min, "
                "sigma_max");
  ExpectInvalid("to_float(scale=2)", "to_float has no argument 'scale'; it takes none");
  ExpectInvalid("gaussian_blur(ksize=3, ksize=5)", "gaussian_blur.ksize given twice");
}

TEST(ParsePipelineTextTest, BadNumbers) {
  ExpectInvalid("gaussian_blur(ksize=abc)", "gaussian_blur.ksize: expected an integer");
  ExpectInvalid("gaussian_blur(ksize=3.5)", "got '3.5'");
  ExpectInvalid("gaussian_blur(ksize=99999999999)", "got '99999999999'");
  ExpectInvalid("random_crop(height=-5, width=3)",
                "random_crop.height: expected an integer in 0..4294967295, got '-5'");
  ExpectInvalid("horizontal_flip(p=half)",
                "horizontal_flip.p: expected a finite number, got "
                "'half'");
  ExpectInvalid("horizontal_flip(p=nan)", "got 'nan'");
  ExpectInvalid("normalize(mean=[0.1, x], std=[1])", "normalize.mean: expected a finite number");
  ExpectInvalid("gaussian_blur(ksize=)", "got end of text");
}

TEST(ParsePipelineTextTest, ListShapes) {
  ExpectInvalid("normalize(mean=0.5, std=[1])", "normalize.mean: expected a list like [1, 2, 3]");
  ExpectInvalid("gaussian_blur(ksize=[3])",
                "gaussian_blur.ksize: expected a single int, not a "
                "list");
  ExpectInvalid("normalize(mean=[0.5, 0.5", "expected ','");
}

TEST(ParsePipelineTextTest, Syntax) {
  ExpectInvalid("to_float,", "column 10: expected an op name, got end of text");
  ExpectInvalid("to_float horizontal_flip", "column 10: expected ',', got 'h'");
  ExpectInvalid("gaussian_blur(ksize=3", "expected ',', got end of text");
  ExpectInvalid("gaussian_blur(ksize 3)", "expected '=', got '3'");
  ExpectInvalid(", to_float", "column 1: expected an op name, got ','");
}

TEST(PipelineOpsHelpTest, ListsEveryOpAndArgument) {
  const std::string help = PipelineOpsHelp();
  for (const OpSchema& schema : OpSchemas()) {
    EXPECT_THAT(help, HasSubstr(schema.name));
    for (const ArgSchema& arg : schema.args) EXPECT_THAT(help, HasSubstr(arg.name));
  }
  EXPECT_THAT(help, HasSubstr("gaussian_blur(ksize, sigma=0, sigma_min=0.1, sigma_max=2.0)"));
  EXPECT_THAT(help, HasSubstr("ksize (int, required)"));
  EXPECT_THAT(help, HasSubstr("p (float, default 0.5)"));
}

}  // namespace
}  // namespace stoker
