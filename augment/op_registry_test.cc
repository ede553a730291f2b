#include "augment/op_registry.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using ::testing::HasSubstr;

constexpr ImageShape kU8{32, 48, 3, PixelType::kUint8};
constexpr ImageShape kF32{32, 48, 3, PixelType::kFloat32};

// The text parser sets fields by the schema's names: they must match the proto.
TEST(OpRegistryTest, SchemaMatchesProto) {
  const Descriptor* op_descriptor = stoker::v1::Op::descriptor();
  std::set<std::string> names;
  for (const OpSchema& schema : OpSchemas()) {
    EXPECT_TRUE(names.insert(schema.name).second) << schema.name;
    const FieldDescriptor* field = op_descriptor->FindFieldByName(schema.name);
    ASSERT_NE(field, nullptr) << schema.name;
    EXPECT_EQ(field->number(), static_cast<int>(schema.op_case)) << schema.name;
    EXPECT_FALSE(schema.doc.empty());
    ASSERT_NE(schema.factory, nullptr);
    const Descriptor* args = field->message_type();
    EXPECT_EQ(args->field_count(), static_cast<int>(schema.args.size())) << schema.name;
    for (const ArgSchema& arg : schema.args) {
      const FieldDescriptor* arg_field = args->FindFieldByName(arg.name);
      ASSERT_NE(arg_field, nullptr) << schema.name << "." << arg.name;
      EXPECT_FALSE(arg.doc.empty());
      switch (arg.type) {
        case ArgType::kInt:
          EXPECT_TRUE(arg_field->cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
                      arg_field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32);
          EXPECT_FALSE(arg_field->is_repeated());
          break;
        case ArgType::kFloat:
          EXPECT_EQ(arg_field->cpp_type(), FieldDescriptor::CPPTYPE_FLOAT);
          EXPECT_FALSE(arg_field->is_repeated());
          break;
        case ArgType::kFloatList:
          EXPECT_EQ(arg_field->cpp_type(), FieldDescriptor::CPPTYPE_FLOAT);
          EXPECT_TRUE(arg_field->is_repeated());
          break;
        case ArgType::kOpList:
          EXPECT_EQ(arg_field->message_type(), op_descriptor);
          EXPECT_TRUE(arg_field->is_repeated());
          break;
      }
    }
  }
  // Every oneof member has an op.
  EXPECT_EQ(static_cast<int>(OpSchemas().size()), op_descriptor->oneof_decl(0)->field_count());
}

TEST(OpRegistryTest, FindsByNameAndCase) {
  ASSERT_NE(FindOpSchema("gaussian_blur"), nullptr);
  EXPECT_EQ(FindOpSchema("gaussian_blur")->op_case, stoker::v1::Op::kGaussianBlur);
  EXPECT_EQ(FindOpSchema(stoker::v1::Op::kNormalize)->name, "normalize");
  EXPECT_EQ(FindOpSchema("blur"), nullptr);
  EXPECT_EQ(FindOpSchema(stoker::v1::Op::OP_NOT_SET), nullptr);
  EXPECT_EQ(KnownOpNames(),
            "decode, resize, center_crop, random_resized_crop, to_float, gaussian_blur, "
            "random_crop, horizontal_flip, normalize, color_jitter, grayscale, vertical_flip, "
            "invert, posterize, solarize, autocontrast, random_grayscale, equalize, "
            "adjust_sharpness, pad, random_erasing, adjust_hue, affine, random_rotation, "
            "random_affine, random_perspective, random_apply, random_choice, random_order, "
            "rand_augment, trivial_augment_wide, auto_augment, aug_mix, sanitize_boxes, zoom_out, "
            "random_iou_crop");
}

TEST(OpRegistryTest, CreatesOpsWithOutputShapes) {
  stoker::v1::Op op;
  op.mutable_to_float();
  auto to_float = CreateOp(op, 0, kU8);
  ASSERT_TRUE(to_float.ok()) << to_float.status();
  EXPECT_EQ((*to_float)->name(), "to_float");
  EXPECT_EQ((*to_float)->output_shape(), kF32);

  op.mutable_random_crop()->set_height(10);
  op.mutable_random_crop()->set_width(48);
  auto crop = CreateOp(op, 1, kU8);
  ASSERT_TRUE(crop.ok()) << crop.status();
  EXPECT_EQ((*crop)->output_shape(), (ImageShape{10, 48, 3, PixelType::kUint8}));
  EXPECT_FALSE((*crop)->SupportsInPlace());

  op.mutable_horizontal_flip();
  auto flip = CreateOp(op, 2, kU8);
  ASSERT_TRUE(flip.ok()) << flip.status();
  EXPECT_TRUE((*flip)->SupportsInPlace());
}

TEST(OpRegistryTest, UnsetOpNamesIndexAndChoices) {
  auto op = CreateOp(stoker::v1::Op(), 4, kU8);
  EXPECT_EQ(op.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(op.status().message(), HasSubstr("pipeline.ops[4]: no op set"));
  EXPECT_THAT(op.status().message(), HasSubstr("gaussian_blur"));
}

TEST(OpRegistryTest, ErrorsArePrefixedWithIndexAndName) {
  stoker::v1::Op op;
  op.mutable_gaussian_blur()->set_ksize(4);
  auto blur = CreateOp(op, 3, kF32);
  EXPECT_EQ(blur.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(blur.status().message(),
            "pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4");
}

TEST(OpRegistryTest, HorizontalFlipProbabilityRange) {
  stoker::v1::Op op;
  op.mutable_horizontal_flip()->set_p(1.5f);
  auto flip = CreateOp(op, 0, kU8);
  EXPECT_EQ(flip.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flip.status().message(), HasSubstr("(horizontal_flip): p must be in [0, 1]"));
}

TEST(OpRegistryTest, BlurSigmaChecks) {
  stoker::v1::Op op;
  op.mutable_gaussian_blur()->set_ksize(3);
  op.mutable_gaussian_blur()->set_sigma(-1);
  auto negative = CreateOp(op, 0, kF32);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.status().message(), HasSubstr("sigma must be > 0"));

  op.mutable_gaussian_blur()->set_sigma(0);
  op.mutable_gaussian_blur()->set_sigma_min(3);  // sigma_max defaults to 2.
  auto inverted = CreateOp(op, 0, kF32);
  EXPECT_EQ(inverted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(inverted.status().message(), HasSubstr("sigma_max must be >= sigma_min"));

  op.mutable_gaussian_blur()->set_sigma_min(-0.5f);
  auto bad_min = CreateOp(op, 0, kF32);
  EXPECT_EQ(bad_min.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_min.status().message(), HasSubstr("sigma_min must be > 0, got -0.5"));
}

TEST(OpRegistryTest, BlurNeedsImageLargerThanHalfKernel) {
  stoker::v1::Op op;
  op.mutable_gaussian_blur()->set_ksize(11);
  auto small = CreateOp(op, 2, ImageShape{5, 40, 3, PixelType::kFloat32});
  EXPECT_EQ(small.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(small.status().message(), HasSubstr("pipeline.ops[2] (gaussian_blur): ksize 11"));
  EXPECT_THAT(small.status().message(), HasSubstr("got 5x40"));
  EXPECT_TRUE(CreateOp(op, 2, ImageShape{6, 6, 1, PixelType::kFloat32}).ok());
}

TEST(OpRegistryTest, ToFloatRequiresUint8) {
  stoker::v1::Op op;
  op.mutable_to_float();
  auto twice = CreateOp(op, 1, kF32);
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.status().message(), HasSubstr("(to_float): requires uint8 input, got float32"));
}

}  // namespace
}  // namespace stoker
