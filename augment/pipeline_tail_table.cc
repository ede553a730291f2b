#include "augment/pipeline_tail_table.h"

#include "augment/kernels/convert.h"
#include "augment/kernels/half.h"
#include "augment/op.h"
#include "common/counter_rng.h"
#include "common/status_macros.h"
#include "image/image.h"

namespace stoker {

size_t TableTailStart(const std::vector<std::unique_ptr<Op>>& ops, size_t first) {
  size_t start = ops.size();
  while (start > first && ops[start - 1]->MapsElementsPerChannel()) --start;
  while (start < ops.size() && ops[start]->input_shape().type != PixelType::kUint8) ++start;
  return start;
}

absl::StatusOr<std::vector<float>> TailTable(const std::vector<std::unique_ptr<Op>>& ops,
                                             size_t start) {
  const ImageShape& in = ops[start]->input_shape();
  const uint32_t width = in.width == 0 ? kTableValues : in.width;
  const ImageShape probe{static_cast<uint32_t>((kTableValues + width - 1) / width), width,
                         in.channels, PixelType::kUint8};
  ImageBuffer buffers[2], scratch;
  buffers[0].Reshape(probe);
  uint8_t* values = buffers[0].view().pixels<uint8_t>();
  for (size_t p = 0; p < probe.elements(); ++p) {
    values[p] = static_cast<uint8_t>(p / in.channels);  // Pixels past 255 wrap around.
  }
  CounterRng no_draws = SampleRng(0, 0, 0);  // These ops draw nothing.
  ImageView current = buffers[0].view();
  for (size_t i = start; i < ops.size(); ++i) {
    // The probe's size (OutputShapeFor would give the op's own, fixed one); the op's type.
    const ImageShape shape{current.shape.height, current.shape.width, current.shape.channels,
                           ops[i]->output_shape().type};
    ImageBuffer& next = buffers[(i - start + 1) % 2];
    next.Reshape(shape);
    RETURN_IF_ERROR(ops[i]->Apply(current, &no_draws, &scratch, next.view()));
    current = next.view();
  }
  std::vector<float> table(size_t{in.channels} * kTableValues);
  const float* mapped = current.pixels<const float>();
  for (size_t v = 0; v < kTableValues; ++v) {
    for (size_t c = 0; c < in.channels; ++c) {
      table[c * kTableValues + v] = mapped[v * in.channels + c];
    }
  }
  return table;
}

std::vector<uint16_t> NarrowedTable(const std::vector<float>& table, stoker::v1::DType dtype) {
  std::vector<uint16_t> narrowed(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    narrowed[i] =
        dtype == stoker::v1::DTYPE_FLOAT16 ? Float16Bits(table[i]) : Bfloat16Bits(table[i]);
  }
  return narrowed;
}

}  // namespace stoker
