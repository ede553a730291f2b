// Fuzz target: pipeline text (augment/pipeline_text.h), as a flag or config gives it, and the
// compile step that validates the parsed arguments (for decoded 32×32 RGB input and for encoded
// input). Invariant: a parse error is INVALID_ARGUMENT.

#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<stoker::v1::PipelineSpec> spec = stoker::ParsePipelineText(text);
  if (!spec.ok()) {
    FUZZ_CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  spec->set_output_dtype(stoker::v1::DTYPE_FLOAT32);
  spec->set_output_layout(stoker::v1::LAYOUT_CHW);
  const stoker::ImageShape shape{32, 32, 3, stoker::PixelType::kUint8};
  for (const stoker::InputFormat& input :
       {stoker::InputFormat::Decoded(shape), stoker::InputFormat::Encoded()}) {
    absl::StatusOr<stoker::Pipeline> pipeline = stoker::Pipeline::Compile(*spec, input);
    if (!pipeline.ok()) {
      FUZZ_CHECK(pipeline.status().code() == absl::StatusCode::kInvalidArgument);
    }
  }
  return 0;
}
