#ifndef STOKER_AUGMENT_PIPELINE_H_
#define STOKER_AUGMENT_PIPELINE_H_

// The per-sample pipeline executor: a validated, compiled list of ops that turns one source image
// into one slot of a batch tensor (in the job's output layout and dtype).
//
//   ASSIGN_OR_RETURN(Pipeline pipeline, Pipeline::Compile(spec.pipeline(), source.format()));
//   PipelineWorkspace workspace;                       // one per thread, reused
//   CounterRng rng = SampleRng(seed, epoch, index);
//   RETURN_IF_ERROR(pipeline.Run(SampleInput::Decoded(image), &rng, &workspace, slot));
//
// Errors from Compile are INVALID_ARGUMENT and name the op and field, e.g.
// "pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4".

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "augment/image.h"
#include "augment/sample_input.h"
#include "common/counter_rng.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

class Op;  // augment/op.h

// Scratch images an executing pipeline ping-pongs between. One per thread; reusing it across
// samples means no allocation once the first sample has sized the buffers. Thread-compatible.
class PipelineWorkspace {
 public:
  ImageBuffer& buffer(int i) { return buffers_[i & 1]; }
  // Per-op scratch (e.g. the blur's padded row), also used to stage an output conversion.
  ImageBuffer& scratch() { return scratch_; }

 private:
  ImageBuffer buffers_[2];
  ImageBuffer scratch_;
};

// Immutable after Compile: Run may be called from many threads, each with its own workspace.
class Pipeline {
 public:
  // Errors: INVALID_ARGUMENT naming the op and field; also when `input` is encoded, which this
  // version cannot decode yet.
  static absl::StatusOr<Pipeline> Compile(const stoker::v1::PipelineSpec& spec,
                                          const InputFormat& input);
  static absl::StatusOr<Pipeline> Compile(const stoker::v1::PipelineSpec& spec,
                                          const ImageShape& input_shape) {
    return Compile(spec, InputFormat::Decoded(input_shape));
  }

  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  const ImageShape& input_shape() const { return input_shape_; }
  // Shape after the last op, before the output conversion.
  const ImageShape& result_shape() const { return result_shape_; }
  stoker::v1::DType output_dtype() const { return output_dtype_; }
  stoker::v1::Layout output_layout() const { return output_layout_; }
  size_t output_bytes_per_sample() const { return output_bytes_per_sample_; }
  // [N, H, W, C] or [N, C, H, W].
  std::vector<int64_t> BatchShape(int64_t batch_size) const;

  // Runs every op on `input` (REQUIRES: input.image.shape == input_shape(); it is not modified)
  // drawing
  // randomness from `rng` (the draws each op makes are listed in augment/op.h), and writes
  // output_bytes_per_sample() bytes to `out`. `out` needs no particular alignment (an unaligned
  // float32 slot costs one extra copy) and must not overlap `input` or the workspace. Once
  // `workspace` has run a sample of this pipeline, Run allocates nothing.
  // Errors: INVALID_ARGUMENT when input.shape != input_shape(); INTERNAL when a kernel fails
  // (e.g. an OpenCV exception), naming the op.
  absl::Status Run(const SampleInput& input, CounterRng* rng, PipelineWorkspace* workspace,
                   uint8_t* out) const;
  absl::Status Run(const ImageView& image, CounterRng* rng, PipelineWorkspace* workspace,
                   uint8_t* out) const {
    return Run(SampleInput::Decoded(image), rng, workspace, out);
  }

 private:
  Pipeline();

  std::vector<std::unique_ptr<Op>> ops_;
  ImageShape input_shape_;
  ImageShape result_shape_;
  stoker::v1::DType output_dtype_ = stoker::v1::DTYPE_UNSPECIFIED;
  stoker::v1::Layout output_layout_ = stoker::v1::LAYOUT_HWC;
  size_t output_bytes_per_sample_ = 0;
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_H_
