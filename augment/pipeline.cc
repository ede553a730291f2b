#include "augment/pipeline.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/kernels/convert.h"
#include "augment/op.h"
#include "augment/op_registry.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

std::string ShapeString(const ImageShape& shape) {
  return absl::StrCat(shape.height, "x", shape.width, "x", shape.channels, " ",
                      PixelTypeName(shape.type));
}

PixelType PixelTypeOf(stoker::v1::DType dtype) {
  return dtype == stoker::v1::DTYPE_UINT8 ? PixelType::kUint8 : PixelType::kFloat32;
}

stoker::v1::DType DTypeOf(PixelType type) {
  return type == PixelType::kUint8 ? stoker::v1::DTYPE_UINT8 : stoker::v1::DTYPE_FLOAT32;
}

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace

Pipeline::Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

absl::StatusOr<Pipeline> Pipeline::Compile(const stoker::v1::PipelineSpec& spec,
                                           const InputFormat& input) {
  if (input.encoded) {
    return absl::InvalidArgumentError(
        "pipeline: the dataset yields encoded images, which this version cannot decode");
  }
  const ImageShape& input_shape = input.shape;
  if (input_shape.elements() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline input shape ", ShapeString(input_shape), " is empty"));
  }
  Pipeline pipeline;
  pipeline.input_shape_ = input_shape;
  ImageShape shape = input_shape;
  for (int i = 0; i < spec.ops_size(); ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<Op> op, CreateOp(spec.ops(i), i, shape));
    shape = op->output_shape();
    pipeline.ops_.push_back(std::move(op));
  }
  pipeline.result_shape_ = shape;

  switch (spec.output_layout()) {
    case stoker::v1::LAYOUT_UNSPECIFIED:
    case stoker::v1::LAYOUT_HWC:
      pipeline.output_layout_ = stoker::v1::LAYOUT_HWC;
      break;
    case stoker::v1::LAYOUT_CHW:
      pipeline.output_layout_ = stoker::v1::LAYOUT_CHW;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline.output_layout: unknown value ", spec.output_layout()));
  }
  switch (spec.output_dtype()) {
    case stoker::v1::DTYPE_UNSPECIFIED:
      pipeline.output_dtype_ = DTypeOf(shape.type);
      break;
    case stoker::v1::DTYPE_UINT8:
    case stoker::v1::DTYPE_FLOAT32:
      pipeline.output_dtype_ = spec.output_dtype();
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline.output_dtype: unknown value ", spec.output_dtype()));
  }
  pipeline.output_bytes_per_sample_ =
      shape.elements() * PixelTypeSize(PixelTypeOf(pipeline.output_dtype_));
  return pipeline;
}

std::vector<int64_t> Pipeline::BatchShape(int64_t batch_size) const {
  const int64_t h = result_shape_.height;
  const int64_t w = result_shape_.width;
  const int64_t c = result_shape_.channels;
  if (output_layout_ == stoker::v1::LAYOUT_CHW) return {batch_size, c, h, w};
  return {batch_size, h, w, c};
}

absl::Status Pipeline::Run(const SampleInput& sample, CounterRng* rng,
                           PipelineWorkspace* workspace, uint8_t* out) const {
  const ImageView& input = sample.image;
  if (input.shape != input_shape_) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline input is ", ShapeString(input.shape),
                                                   ", compiled for ", ShapeString(input_shape_)));
  }
  const PixelType out_type = PixelTypeOf(output_dtype_);
  const bool out_aligned = IsAligned(out, PixelTypeSize(out_type));
  // When the output conversion is the identity, the last op writes straight into `out`.
  const bool last_op_writes_out = !ops_.empty() && output_layout_ == stoker::v1::LAYOUT_HWC &&
                                  out_type == result_shape_.type && out_aligned;

  ImageView current = input;
  int next_buffer = 0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = *ops_[i];
    ImageView target;
    if (i + 1 == ops_.size() && last_op_writes_out) {
      target = ImageView{out, op.output_shape()};
    } else if (op.SupportsInPlace() && current.data != input.data) {
      target = ImageView{current.data, op.output_shape()};  // A workspace buffer: reuse it.
    } else {
      ImageBuffer& buffer = workspace->buffer(next_buffer);
      next_buffer ^= 1;
      buffer.Reshape(op.output_shape());
      target = buffer.view();
    }
    if (absl::Status status = op.Apply(current, rng, &workspace->scratch(), target); !status.ok()) {
      return PrefixStatus(absl::StrCat("pipeline.ops[", i, "] (", op.name(), "): "), status);
    }
    current = target;
  }
  if (last_op_writes_out) return absl::OkStatus();

  const OutputLayout layout =
      output_layout_ == stoker::v1::LAYOUT_CHW ? OutputLayout::kChw : OutputLayout::kHwc;
  if (out_aligned) {
    ConvertImage(current, layout, out_type, out);
  } else {
    // Convert into aligned staging memory, then copy the bytes.
    ImageBuffer& staging = workspace->scratch();
    staging.Reshape(
        ImageShape{result_shape_.height, result_shape_.width, result_shape_.channels, out_type});
    ConvertImage(current, layout, out_type, staging.view().data);
    std::memcpy(out, staging.view().data, output_bytes_per_sample_);
  }
  return absl::OkStatus();
}

}  // namespace stoker
