// The executor's fused tails (augment/pipeline.h): a to_float/normalize tail read from a table,
// and in-place ops after the last other op run on the output slot, equal bit for bit to the ops
// run one by one into fresh buffers and then converted.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "augment/kernels/convert.h"
#include "augment/kernels/half.h"
#include "augment/op.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

constexpr char kNormalize[] = "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])";

Pipeline CompileText(const std::string& text, const ImageShape& shape, stoker::v1::Layout layout,
                     stoker::v1::DType dtype) {
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  spec->set_output_layout(layout);
  spec->set_output_dtype(dtype);
  absl::StatusOr<Pipeline> pipeline = Pipeline::Compile(*spec, shape);
  EXPECT_TRUE(pipeline.ok()) << text << ": " << pipeline.status();
  return std::move(*pipeline);
}

std::vector<uint8_t> RandomPixels(const ImageShape& shape, uint64_t key) {
  CounterRng rng(key);
  std::vector<uint8_t> pixels(shape.elements());
  for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng.UniformInt(256));
  return pixels;
}

// The reference: every op applied in turn into a fresh buffer, then the output conversion (for
// 16-bit floats: to float32, then narrowed).
std::vector<uint8_t> RunOpsOneByOne(const Pipeline& pipeline, const ImageView& input,
                                    uint64_t index) {
  CounterRng rng = SampleRng(/*seed=*/7, /*epoch=*/1, index);
  std::vector<ImageBuffer> buffers(pipeline.num_ops());
  ImageBuffer scratch;
  ImageView current = input;
  for (size_t i = 0; i < pipeline.num_ops(); ++i) {
    const absl::StatusOr<ImageShape> shape = pipeline.op(i).OutputShapeFor(current.shape);
    EXPECT_TRUE(shape.ok()) << shape.status();
    buffers[i].Reshape(*shape);
    EXPECT_TRUE(pipeline.op(i).Apply(current, &rng, &scratch, buffers[i].view()).ok());
    current = buffers[i].view();
  }
  std::vector<uint8_t> out(pipeline.output_bytes_per_sample());
  const stoker::v1::DType dtype = pipeline.output_dtype();
  const PixelType type = dtype == stoker::v1::DTYPE_UINT8 ? PixelType::kUint8 : PixelType::kFloat32;
  std::vector<float> aligned(current.shape.elements() + 1);
  ConvertImage(
      current,
      pipeline.output_layout() == stoker::v1::LAYOUT_CHW ? OutputLayout::kChw : OutputLayout::kHwc,
      type, aligned.data());
  if (dtype == stoker::v1::DTYPE_FLOAT16) {
    FloatToFloat16(aligned.data(), current.shape.elements(), out.data());
  } else if (dtype == stoker::v1::DTYPE_BFLOAT16) {
    FloatToBfloat16(aligned.data(), current.shape.elements(), out.data());
  } else {
    std::memcpy(out.data(), aligned.data(), out.size());
  }
  return out;
}

// Runs the pipeline into a float-aligned buffer, or `offset` bytes past one (unaligned).
std::vector<uint8_t> RunPipeline(const Pipeline& pipeline, const ImageView& input, uint64_t index,
                                 PipelineWorkspace* workspace, size_t offset) {
  std::vector<float> out(pipeline.output_bytes_per_sample() / sizeof(float) + 2);
  auto* bytes = reinterpret_cast<uint8_t*>(out.data()) + offset;
  CounterRng rng = SampleRng(/*seed=*/7, /*epoch=*/1, index);
  const absl::Status status = pipeline.Run(input, &rng, workspace, bytes);
  EXPECT_TRUE(status.ok()) << status;
  return std::vector<uint8_t>(bytes, bytes + pipeline.output_bytes_per_sample());
}

constexpr ImageShape RgbShape(uint32_t height, uint32_t width) {
  return ImageShape{height, width, 3, PixelType::kUint8};
}

struct Case {
  std::string text;
  ImageShape input;
  size_t table_ops;  // Ops the table replaces.
};

void CheckFusedTail(const Case& c, const Pipeline& pipeline) {
  EXPECT_EQ(pipeline.table_tail_ops(), c.table_ops);
  std::vector<uint8_t> pixels = RandomPixels(c.input, 5);
  const ImageView input{pixels.data(), c.input};
  PipelineWorkspace workspace;
  for (uint64_t index = 0; index < 12; ++index) {
    const std::vector<uint8_t> expected = RunOpsOneByOne(pipeline, input, index);
    ASSERT_EQ(RunPipeline(pipeline, input, index, &workspace, 0), expected) << "sample " << index;
    ASSERT_EQ(RunPipeline(pipeline, input, index, &workspace, 1), expected) << "sample " << index;
  }
}

// Float32 (the tail's own type, UNSPECIFIED), float16 and bfloat16 outputs.
TEST(PipelineTailTest, FusedTailsEqualTheOpsRunOneByOne) {
  const ImageShape rgb{24, 32, 3, PixelType::kUint8};
  const ImageShape tiny{5, 7, 3, PixelType::kUint8};  // Narrow: the probe has 37 rows of 7.
  const ImageShape gray{24, 32, 1, PixelType::kUint8};
  const std::string norm = kNormalize;
  const Case cases[] = {
      {"to_float", rgb, 1},
      {"to_float, " + norm, rgb, 2},
      {"to_float, " + norm + ", " + norm, rgb, 3},
      {"to_float, " + norm, tiny, 2},
      {"to_float, " + norm, RgbShape(300, 400), 2},  // Wider than the 256 values: one probe row.
      {"to_float, normalize(mean=[0.5], std=[0.25])", gray, 2},
      {"random_resized_crop(height=20, width=16), horizontal_flip, to_float, " + norm, rgb, 2},
      // The flip splits the run; normalize alone takes float32: no table.
      {"to_float, horizontal_flip, " + norm, rgb, 0},
      {"random_resized_crop(height=20, width=16), horizontal_flip", rgb, 0},
      {"center_crop(height=16, width=16), horizontal_flip(p=1), vertical_flip", rgb, 0},
      {"to_float, gaussian_blur(ksize=3)", rgb, 0},
  };
  const stoker::v1::DType dtypes[] = {stoker::v1::DTYPE_UNSPECIFIED, stoker::v1::DTYPE_FLOAT16,
                                      stoker::v1::DTYPE_BFLOAT16};
  for (const Case& c : cases) {
    for (const stoker::v1::Layout layout : {stoker::v1::LAYOUT_HWC, stoker::v1::LAYOUT_CHW}) {
      for (const stoker::v1::DType dtype : dtypes) {
        SCOPED_TRACE(c.text + (layout == stoker::v1::LAYOUT_CHW ? " (CHW) " : " (HWC) ") +
                     stoker::v1::DType_Name(dtype));
        CheckFusedTail(c, CompileText(c.text, c.input, layout, dtype));
      }
    }
  }
}

}  // namespace
}  // namespace stoker
