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
// A pipeline compiled for encoded input (InputFormat::Encoded()) starts with decode; image sizes
// then vary per sample until an op of fixed output size (resize to height × width, a crop),
// and Compile refuses a pipeline that does not end at a fixed size, since a batch has one shape.
// Per-sample size checks (e.g. a crop larger than the decoded image) happen in Run.
//
// Errors from Compile are INVALID_ARGUMENT and name the op and field, e.g.
// "pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4".

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "augment/batch_mix.h"
#include "augment/kernels/decode.h"
#include "common/counter_rng.h"
#include "image/image.h"
#include "image/sample_input.h"
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
  // The decoder of encoded samples (keeps its TurboJPEG handle across samples).
  ImageDecoder& decoder() { return decoder_; }

  // With timing on, Run records the seconds each op took (op_seconds()[i] for ops[i], the
  // output conversion not included); off by default (two clock reads per op).
  void set_time_ops(bool on) { time_ops_ = on; }
  bool time_ops() const { return time_ops_; }
  const std::vector<double>& op_seconds() const { return op_seconds_; }
  std::vector<double>& mutable_op_seconds() { return op_seconds_; }

 private:
  ImageBuffer buffers_[2];
  ImageBuffer scratch_;
  ImageDecoder decoder_;
  bool time_ops_ = false;
  std::vector<double> op_seconds_;
};

// Immutable after Compile: Run may be called from many threads, each with its own workspace.
class Pipeline {
 public:
  // Errors: INVALID_ARGUMENT naming the op and field; for encoded input also when ops[0] is not
  // decode ("pipeline.ops[0]: ..."), when decode appears elsewhere, and when the final image
  // size is not fixed.
  static absl::StatusOr<Pipeline> Compile(const stoker::v1::PipelineSpec& spec,
                                          const InputFormat& input);
  static absl::StatusOr<Pipeline> Compile(const stoker::v1::PipelineSpec& spec,
                                          const ImageShape& input_shape) {
    return Compile(spec, InputFormat::Decoded(input_shape));
  }

  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  // The decoded input's shape; all zero for encoded input.
  const ImageShape& input_shape() const { return input_shape_; }
  bool encoded_input() const { return encoded_input_; }
  // Shape after the last op, before the output conversion.
  const ImageShape& result_shape() const { return result_shape_; }
  stoker::v1::DType output_dtype() const { return output_dtype_; }
  stoker::v1::Layout output_layout() const { return output_layout_; }
  size_t output_bytes_per_sample() const { return output_bytes_per_sample_; }
  // [N, H, W, C] or [N, C, H, W].
  std::vector<int64_t> BatchShape(int64_t batch_size) const;
  // The ops in order, by registry name ("decode", "gaussian_blur", ...).
  size_t num_ops() const { return ops_.size(); }
  const std::string& op_name(size_t i) const;
  // Op i, for tools that inspect a pipeline (shapes, timings). REQUIRES: i < num_ops().
  const Op& op(size_t i) const { return *ops_[i]; }
  // The batch-level stage (spec.batch_mix: MixUp/CutMix), run by the batch's producer after
  // every sample (augment/batch_mix.h); nullptr when the spec has none.
  const BatchMix* batch_mix() const { return batch_mix_ ? &*batch_mix_ : nullptr; }

  // Runs every op on `input` (REQUIRES: input.image is set, with input.image.shape ==
  // input_shape(), for decoded input; input.encoded for encoded input; neither is modified),
  // drawing randomness from `rng` (the draws each op makes are listed in augment/op.h), and writes
  // output_bytes_per_sample() bytes to `out`. `out` needs no particular alignment (an unaligned
  // float32 slot costs one extra copy) and must not overlap `input` or the workspace. Once
  // `workspace` has run a sample of this pipeline, Run allocates nothing for decoded input; for
  // encoded input the buffers grow only when a sample decodes larger than any before (JPEG
  // decoding allocates nothing; OpenCV's PNG and WebP decoders allocate internally).
  // Errors (all prefixed "pipeline.ops[i] (name): " when an op fails):
  //   DATA_LOSS bad-sample errors from decode (common/bad_sample.h carries the reason): the
  //     caller replaces the sample;
  //   INVALID_ARGUMENT when input.shape != input_shape(), or when a decoded image is too small
  //     for an op (e.g. center_crop larger than the image);
  //   INTERNAL when a kernel fails (e.g. an OpenCV exception).
  absl::Status Run(const SampleInput& input, CounterRng* rng, PipelineWorkspace* workspace,
                   uint8_t* out) const;
  absl::Status Run(const ImageView& image, CounterRng* rng, PipelineWorkspace* workspace,
                   uint8_t* out) const {
    return Run(SampleInput::Decoded(image), rng, workspace, out);
  }

 private:
  Pipeline();

  // Runs ops_[0] (decode) on sample.encoded into workspace buffer 0; sets *decoded to it.
  absl::Status Decode(const SampleInput& sample, PipelineWorkspace* workspace,
                      ImageView* decoded) const;

  std::vector<std::unique_ptr<Op>> ops_;
  bool encoded_input_ = false;
  ImageShape input_shape_;
  ImageShape result_shape_;
  stoker::v1::DType output_dtype_ = stoker::v1::DTYPE_UNSPECIFIED;
  stoker::v1::Layout output_layout_ = stoker::v1::LAYOUT_HWC;
  size_t output_bytes_per_sample_ = 0;
  std::optional<BatchMix> batch_mix_;
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_H_
