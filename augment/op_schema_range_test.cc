// The argument ranges of the op schemas (ArgSchema::range) agree with what the factories accept:
// a value just outside a range is refused naming the argument, the ends of a closed range are
// not. Tools (stoker.from_torchvision) check values against the schema's ranges before an op
// exists, so a range narrower than the factory's would refuse good pipelines and a wider one
// would let bad ones through to the workers.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "augment/batch_mix.h"
#include "augment/kernels/convert.h"
#include "augment/op_registry.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "augment/testing/spec_from_text.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Arguments that make each op with required arguments valid, so that only the argument under
// test can be wrong.
const std::map<std::string, std::string>& BaseArgs() {
  static const auto* const kBase = new std::map<std::string, std::string>{
      {"resize", "shorter=8"},
      {"center_crop", "height=8, width=8"},
      {"random_resized_crop", "height=8, width=8"},
      {"random_crop", "height=8, width=8"},
      {"gaussian_blur", "ksize=3"},
      {"normalize", "mean=[0, 0, 0], std=[1, 1, 1]"},
      {"posterize", "bits=4"},
      {"solarize", "threshold=100"},
      {"adjust_sharpness", "sharpness_factor=1"},
      {"adjust_hue", "hue_factor=0"},
      {"pad", "padding=[1]"},
      {"random_rotation", "degrees_min=0, degrees_max=1"},
      {"random_affine", "degrees_min=0, degrees_max=1"},
      {"random_apply", "ops=[invert]"},
      {"random_choice", "ops=[invert]"},
      {"random_order", "ops=[invert]"},
  };
  return *kBase;
}

// Op `schema` with its base arguments, in the pipeline text form.
std::string BaseOpText(const OpSchema& schema) {
  const auto base = BaseArgs().find(schema.name);
  return base == BaseArgs().end() ? schema.name : absl::StrCat(schema.name, "(", base->second, ")");
}

// Op `schema` from its base arguments with argument `arg` set to `value` (for a list, its first
// element); false when the field cannot hold `value` (a negative unsigned).
bool MakeOp(const OpSchema& schema, const ArgSchema& arg, double value, stoker::v1::Op* op) {
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(BaseOpText(schema));
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return false;
  *op = spec->ops(0);
  const FieldDescriptor* op_field = op->GetDescriptor()->FindFieldByName(schema.name);
  Message* args = op->GetReflection()->MutableMessage(op, op_field);
  const FieldDescriptor* field = args->GetDescriptor()->FindFieldByName(arg.name);
  const Reflection* reflection = args->GetReflection();
  if (field->is_repeated()) {
    if (reflection->FieldSize(*args, field) == 0) reflection->AddFloat(args, field, 0);
    reflection->SetRepeatedFloat(args, field, 0, static_cast<float>(value));
    return true;
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_FLOAT:
      reflection->SetFloat(args, field, static_cast<float>(value));
      return true;
    case FieldDescriptor::CPPTYPE_INT32:
      reflection->SetInt32(args, field, static_cast<int32_t>(value));
      return true;
    case FieldDescriptor::CPPTYPE_UINT32:
      if (value < 0) return false;
      reflection->SetUInt32(args, field, static_cast<uint32_t>(value));
      return true;
    default:
      ADD_FAILURE() << schema.name << "." << arg.name << ": a range on a non-number";
      return false;
  }
}

// The error CreateOp gives `op` on a uint8 and on a float32 image, "" where it succeeds.
std::vector<std::string> Errors(const stoker::v1::Op& op) {
  std::vector<std::string> errors;
  for (PixelType type : {PixelType::kUint8, PixelType::kFloat32}) {
    absl::StatusOr<std::unique_ptr<Op>> created = CreateOp(op, 0, ImageShape{32, 48, 3, type});
    errors.push_back(created.ok() ? "" : std::string(created.status().message()));
  }
  return errors;
}

// True when `error` is about `arg` alone: "p must be ...", "std[1] must be ..." (not "p: the
// weights sum to 0", which is about the values together).
bool NamesArg(const std::string& error, const OpSchema& schema, const ArgSchema& arg) {
  const std::string prefix = absl::StrCat("(", schema.name, "): ", arg.name);
  return absl::StrContains(error, prefix + " ") || absl::StrContains(error, prefix + "[");
}

// Values just outside `range` and values inside it (its closed ends, or next to an open one).
void Probes(const ArgRange& range, bool integer, std::vector<double>* outside,
            std::vector<double>* inside) {
  const double step = integer ? 1.0 : 0.5;
  if (std::isfinite(range.min)) {
    outside->push_back(range.min_open ? range.min : range.min - step);
    inside->push_back(range.min_open ? range.min + step : range.min);
  }
  if (std::isfinite(range.max)) {
    outside->push_back(range.max_open ? range.max : range.max + step);
    inside->push_back(range.max_open ? range.max - step : range.max);
  }
}

TEST(OpSchemaRangeTest, FactoriesAgreeWithTheSchemaRanges) {
  int checked = 0;
  for (const OpSchema& schema : OpSchemas()) {
    for (const ArgSchema& arg : schema.args) {
      if (!arg.range.has_value()) continue;
      SCOPED_TRACE(absl::StrCat(schema.name, ".", arg.name, " in ", arg.range->Text()));
      std::vector<double> outside, inside;
      Probes(*arg.range, arg.type == ArgType::kInt, &outside, &inside);
      for (double value : outside) {
        stoker::v1::Op op;
        if (!MakeOp(schema, arg, value, &op)) continue;
        EXPECT_FALSE(arg.range->Contains(value)) << value;
        const std::vector<std::string> errors = Errors(op);
        EXPECT_TRUE(NamesArg(errors[0], schema, arg) || NamesArg(errors[1], schema, arg))
            << value << " accepted or refused for another reason: '" << errors[0] << "', '"
            << errors[1] << "'";
        ++checked;
      }
      for (double value : inside) {
        stoker::v1::Op op;
        if (!MakeOp(schema, arg, value, &op)) continue;
        EXPECT_TRUE(arg.range->Contains(value)) << value;
        for (const std::string& error : Errors(op)) {
          EXPECT_FALSE(NamesArg(error, schema, arg)) << value << " refused: " << error;
        }
      }
    }
  }
  EXPECT_GE(checked, 30);
}

TEST(OpSchemaRangeTest, BatchOpsAgreeWithTheSchemaRanges) {
  const ImageShape image{8, 8, 3, PixelType::kFloat32};
  for (const OpSchema& schema : BatchOpSchemas()) {
    for (const ArgSchema& arg : schema.args) {
      if (!arg.range.has_value()) continue;
      SCOPED_TRACE(absl::StrCat(schema.name, ".", arg.name, " in ", arg.range->Text()));
      std::vector<double> outside, inside;
      Probes(*arg.range, arg.type == ArgType::kInt, &outside, &inside);
      auto error = [&](double value) -> std::string {
        std::string text = absl::StrCat("to_float, ", schema.name, "(", arg.name, "=", value);
        if (arg.name != "num_classes") absl::StrAppend(&text, ", num_classes=10");
        absl::StrAppend(&text, ")");
        absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(text);
        if (!spec.ok()) return std::string(spec.status().message());
        absl::StatusOr<BatchMix> mix = BatchMix::Create(
            spec->batch_mix(), image, stoker::v1::DTYPE_FLOAT32, stoker::v1::LAYOUT_HWC);
        return mix.ok() ? "" : std::string(mix.status().message());
      };
      const std::string field = BatchMixField(schema.name, arg.name);
      for (double value : outside) {
        if (value < 0 && arg.type == ArgType::kInt) continue;  // num_classes is unsigned
        EXPECT_TRUE(absl::StrContains(error(value), field)) << value << ": " << error(value);
      }
      for (double value : inside) {
        EXPECT_FALSE(absl::StrContains(error(value), field)) << value << ": " << error(value);
      }
    }
  }
}

// Whether `text` (one op) made a draw when applied to a natural image: the op created for uint8,
// or where it refuses uint8 for float32, then Apply'd with a fresh CounterRng. Also sets *draws
// to the op's own answer (Op::Draws).
bool AppliedOpDraws(const std::string& text, bool* draws) {
  const stoker::v1::Op op = SpecFromText(text).ops(0);
  const ImageShape uint8_shape{32, 48, 3, PixelType::kUint8};
  absl::StatusOr<std::unique_ptr<Op>> created = CreateOp(op, 0, uint8_shape);
  ImageShape shape = uint8_shape;
  if (!created.ok()) {
    shape.type = PixelType::kFloat32;
    created = CreateOp(op, 0, shape);
  }
  EXPECT_TRUE(created.ok()) << text << ": " << created.status();
  if (!created.ok()) return false;
  const Op& applied = **created;
  *draws = applied.Draws();
  ImageBuffer in, out, scratch;
  in.Reshape(uint8_shape);
  const std::vector<uint8_t> pixels = NaturalImage(32, 48, 3, 7);
  std::copy(pixels.begin(), pixels.end(), in.view().pixels<uint8_t>());
  if (shape.type == PixelType::kFloat32) {
    ImageBuffer floats;
    floats.Reshape(shape);
    ConvertImage(in.view(), OutputLayout::kHwc, PixelType::kFloat32, floats.view().data);
    std::swap(in, floats);
  }
  CounterRng rng = SampleRng(5, 0, 1);
  absl::StatusOr<ImageShape> out_shape = applied.DrawsOutputSize()
                                             ? applied.DrawOutputShape(shape, rng, {})
                                             : applied.OutputShapeFor(shape);
  EXPECT_TRUE(out_shape.ok()) << text << ": " << out_shape.status();
  if (!out_shape.ok()) return false;
  out.Reshape(*out_shape);
  const absl::Status status = applied.Apply(in.view(), &rng, &scratch, out.view());
  EXPECT_TRUE(status.ok()) << text << ": " << status;
  return rng.counter() != 0;
}

// Each schema's RngDraws is what its op's Apply does (op.h's list): an op said never to draw
// would be taken into a decoded prefix (pipeline.h) and kept across epochs while it should vary.
TEST(OpSchemaDrawsTest, SchemasStateWhatApplyDraws) {
  for (const OpSchema& schema : OpSchemas()) {
    SCOPED_TRACE(schema.name);
    ASSERT_TRUE(schema.draws == RngDraws::kNever || schema.draws == RngDraws::kAlways ||
                schema.draws == RngDraws::kByArgs)
        << "no RngDraws stated";
    if (schema.op_case == stoker::v1::Op::kDecode) continue;  // Takes bytes, never an image.
    bool op_says = false;
    const bool drew = AppliedOpDraws(BaseOpText(schema), &op_says);
    EXPECT_EQ(op_says, drew) << "Op::Draws() differs from what Apply did";
    if (schema.draws == RngDraws::kNever) EXPECT_FALSE(drew) << "said never to draw, but drew";
    if (schema.draws == RngDraws::kAlways) EXPECT_TRUE(drew) << "said always to draw, but did not";
  }
  // gaussian_blur (kByArgs): a fixed sigma draws nothing, a range draws.
  for (const bool range : {false, true}) {
    const char* text = range ? "gaussian_blur(ksize=3, sigma_min=0.5, sigma_max=1)"
                             : "gaussian_blur(ksize=3, sigma=1)";
    bool op_says = !range;
    EXPECT_EQ(AppliedOpDraws(text, &op_says), range) << text;
    EXPECT_EQ(op_says, range) << text;
  }
  EXPECT_EQ(FindOpSchema("gaussian_blur")->draws, RngDraws::kByArgs);
  EXPECT_EQ(std::string(RngDrawsName(RngDraws::kByArgs)), "by arguments");
}

TEST(ArgRangeTest, ContainsAndText) {
  EXPECT_TRUE(Closed(0, 1).Contains(0));
  EXPECT_TRUE(Closed(0, 1).Contains(1));
  EXPECT_FALSE(Closed(0, 1).Contains(1.5));
  EXPECT_FALSE(Closed(0, 1).Contains(std::nan("")));
  EXPECT_FALSE(Above(0).Contains(0));
  EXPECT_TRUE(AtLeast(0).Contains(0));
  EXPECT_EQ(Closed(-0.5, 0.5).Text(), "[-0.5, 0.5]");
  EXPECT_EQ(AtLeast(1).Text(), ">= 1");
  EXPECT_EQ(Above(0).Text(), "> 0");
  EXPECT_EQ((ArgRange{0, true, 1e6, false}).Text(), "(0, 1e+06]");
}

}  // namespace
}  // namespace stoker
