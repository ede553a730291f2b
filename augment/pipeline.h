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
// Fused decode-and-crop. When the op right after decode reads one window of its image
// (center_crop, random_crop without fixed padding, random_resized_crop: Op::ReadsWindow), Run
// reads the JPEG's header, draws the op's window from the header's size (the same draws, so the
// same window, as after a whole decode) and decodes that window alone
// (ImageDecoder::DecodeJpegRegion); the output is byte-equal to the unfused path's. When the op
// resamples the window by 2x or more with a filter that allows it (random_resized_crop,
// bilinear or area: Op::WindowMayBeDownscaled), the window is also decoded at 1/2, 1/4 or 1/8
// scale in the DCT domain (never below the output size), with its edges rounded to that scale's
// pixels; outputs then differ from the unfused path within the tolerance docs/augmentations.md
// states. PNG, WebP, and inputs a window op declines (e.g. random_crop that must pad) take the
// unfused path. PipelineOptions::fuse_decode_crop turns it off (tests and benchmarks compare).
//
// Fused blur chains. A run of consecutive gaussian_blur ops (ksize 3 to 15, at most
// kMaxBlurChain of them), with the to_float right before it if there is one, runs as one fused
// chain (GaussianBlurChain, augment/kernels/gaussian_blur.h): row by row, each blur's output
// rows feeding the next blur's vertical pass through a ring of a few rows, instead of one whole
// image per op. Each blur draws its sigma as it would alone, in pipeline order, and the output is
// bit-identical to running the ops one by one. PipelineOptions::fuse_blur_chains turns it off.
//
// Fused tails. A pipeline that ends in ops mapping each element per channel (to_float, then
// normalize: Op::MapsElementsPerChannel) on uint8 input, with float32, float16 or bfloat16
// output, runs them as one pass: a table of what they give each of the 256 values of each
// channel, computed at Compile by the ops themselves, is read straight into `out` in its layout
// (HWC or CHW; for 16-bit floats the table holds its entries narrowed as the output conversion
// narrows), equal bit for bit to running them and converting. Ops that work in place and keep the
// final shape after the last other op (horizontal_flip after random_resized_crop) run in place on
// `out` when the output conversion is the identity (uint8 HWC), instead of being copied into it.
//
// Targets. A pipeline compiled with PipelineOptions::with_targets also runs samples with boxes,
// masks and keypoints (augment/targets/targets.h): RunWithTargets runs the ops as Run does, the
// same draws and the same output bytes, and moves the targets with the image as
// torchvision.transforms.v2 does (augment/targets/move_targets.h): each op reports what it did
// (Op::ApplyTracked), the fused decode-and-crop reports the window it decoded (and, decoded at
// 1/d scale, the scaling before and after it), and a JPEG decoded downscaled for a resize counts
// as one resize from the full size. Compile refuses, with INVALID_ARGUMENT naming the op
// ("pipeline.ops[2] (rand_augment): moves pixels and cannot move boxes, masks or keypoints"),
// an op that would move the image without its targets. Run is unchanged by the option.
//
// Decoded prefix (decode once; docs/decisions/0080-decoded-prefix.md). Compiled with
// PipelineOptions::decoded_prefix for encoded input, a pipeline splits into a deterministic
// prefix, ops_[0, prefix_ops()): decode and the longest run after it of ops that never draw
// (Op::Draws), take and give uint8, do not choose from boxes or draw their size, and are not
// replaced by the table tail (resize, center_crop, grayscale, affine, pad, sanitize_boxes;
// gaussian_blur takes float32, so it never belongs); and the random suffix, the rest. The
// prefix's output depends on the sample's bytes alone, so a caller may keep it (RunPrefix) and
// run only the suffix on it later (RunSuffix), in any epoch and for any job whose
// prefix_fingerprint() is the same. Run gives the same bytes as RunPrefix then RunSuffix: the
// fused decode-and-crop is off (it would change bytes), and no table tail or in-place run
// crosses the split. A JPEG is still decoded at a DCT scale before a resize in the prefix (the
// same bytes every time).
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
#include "augment/targets/target_move.h"
#include "augment/targets/targets.h"
#include "common/clock.h"
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

  // With timing on, Run records the seconds each op took on `clock` (op_seconds()[i] for
  // ops[i], the output conversion not included; a fused blur chain's time is on its first op,
  // its other ops read 0); off by default (two clock reads per op). `clock` outlives the timing.
  void set_time_ops(bool on, Clock* clock = Clock::Real()) {
    time_ops_ = on;
    clock_ = clock;
  }
  bool time_ops() const { return time_ops_; }
  Clock* clock() const { return clock_; }
  const std::vector<double>& op_seconds() const { return op_seconds_; }
  std::vector<double>& mutable_op_seconds() { return op_seconds_; }

 private:
  ImageBuffer buffers_[2];
  ImageBuffer scratch_;
  ImageDecoder decoder_;
  bool time_ops_ = false;
  Clock* clock_ = Clock::Real();
  std::vector<double> op_seconds_;
};

// How Compile may rewrite a pipeline; the defaults are what workers run.
struct PipelineOptions {
  // Fused decode-and-crop (above). Off: decode the whole image, then run the crop op on it.
  bool fuse_decode_crop = true;
  // Fused blur chains (above). Off: every op runs alone on whole images.
  bool fuse_blur_chains = true;
  // Samples may carry targets (above): refuse ops that cannot move them, allow RunWithTargets.
  bool with_targets = false;
  // Compile for a two-part run (RunPrefix, RunSuffix: decoded prefix, above); turns the fused
  // decode-and-crop off. Run then gives the same bytes as RunPrefix + RunSuffix.
  bool decoded_prefix = false;
};

// Part of prefix_fingerprint(): bump it whenever a change of a kernel changes what a prefix op
// (decode, resize, center_crop, ...) writes, so that entries kept under the old fingerprint are
// never taken for the new output.
inline constexpr uint32_t kDecodedPrefixVersion = 1;

// Immutable after Compile: Run may be called from many threads, each with its own workspace.
class Pipeline {
 public:
  // Errors: INVALID_ARGUMENT naming the op and field; for encoded input also when ops[0] is not
  // decode ("pipeline.ops[0]: ..."), when decode appears elsewhere, and when the final image
  // size is not fixed.
  static absl::StatusOr<Pipeline> Compile(const stoker::v1::PipelineSpec& spec,
                                          const InputFormat& input,
                                          const PipelineOptions& options = PipelineOptions());
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
  // True when Run decodes JPEGs window by window for ops[1] (fused decode-and-crop, above).
  bool fuses_decode_crop() const { return fuse_decode_crop_; }
  // True when that fused decode may decode ops[1]'s window at a DCT scale
  // (Op::WindowMayBeDownscaled): Run's bytes may then differ from the unfused path's, and from
  // the same pipeline compiled decoded_prefix. False: Run gives the unfused path's bytes.
  bool may_decode_window_downscaled() const;
  // True when at least one run of ops executes as a fused blur chain (above).
  bool fuses_blur_chains() const;
  // How many ops at the end Run replaces by a table (fused tails, above); 0 for none.
  size_t table_tail_ops() const { return tail_table_.empty() ? 0 : ops_.size() - tail_start_; }
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

  // Decoded prefix (above). ops_[0, prefix_ops()) are the deterministic prefix; 0 for decoded
  // input or when not compiled decoded_prefix.
  size_t prefix_ops() const { return prefix_ops_; }
  // Names the prefix's output: FNV-1a 64 of kDecodedPrefixVersion, the input format and each
  // prefix op's deterministic protobuf bytes, so it is the same across processes, machines and
  // builds of the same version; 0 when prefix_ops() == 0.
  uint64_t prefix_fingerprint() const { return prefix_fingerprint_; }
  // Runs the prefix on `input` into workspace memory; *result views it (valid until the next
  // call on this workspace). Errors: Run's (DATA_LOSS bad sample from decode, ...), prefixed as
  // Run's; FAILED_PRECONDITION when prefix_ops() == 0.
  absl::Status RunPrefix(const SampleInput& input, PipelineWorkspace* workspace,
                         ImageView* result) const;
  // Runs ops_[prefix_ops(), end) on `prefix_image` (RunPrefix's result for this sample, possibly
  // kept elsewhere: it must not be workspace memory), drawing from `rng` exactly as Run does,
  // writing output_bytes_per_sample() bytes to `out`. Same bytes as Run on the sample.
  // Errors: Run's for the suffix ops; FAILED_PRECONDITION when prefix_ops() == 0;
  // INVALID_ARGUMENT when prefix_image's channels, type or (where the prefix fixes them) size
  // are not what the prefix makes.
  absl::Status RunSuffix(const ImageView& prefix_image, CounterRng* rng,
                         PipelineWorkspace* workspace, uint8_t* out) const;
  // RunSuffix with targets (compiled with_targets), as RunWithTargets: `source_shape` is the
  // size the image decodes to (the targets' canvas, TargetCanvas); the prefix ops' moves are
  // replayed from sizes. A JPEG decoded at a DCT scale for a resize in the prefix is told apart
  // from a full decode by the size it leads to (prefix_image's); where a crop after the resize
  // hides a difference of a pixel, a JPEG is assumed.
  // Errors: RunSuffix's and RunWithTargets'; INVALID_ARGUMENT when the prefix cannot make
  // prefix_image's size from source_shape.
  absl::Status RunSuffixWithTargets(const ImageView& prefix_image, const ImageShape& source_shape,
                                    CounterRng* rng, PipelineWorkspace* workspace, uint8_t* out,
                                    SampleTargets* targets) const;

  // True when compiled with PipelineOptions::with_targets.
  bool with_targets() const { return with_targets_; }
  // Run, and moves `targets` (whose canvas is the input image's full size: for encoded input,
  // the size the image decodes to without downscaling) with the image: boxes end in XYXY pixels
  // of the output image, masks at its size (targets.h, move_targets.h).
  // Errors: Run's; FAILED_PRECONDITION when not compiled with_targets; INVALID_ARGUMENT from
  // ValidateTargets, and when the targets' canvas is not the input image's size
  // ("targets.canvas_size 10x20 differs from the image's 20x20 at move 0 (crop)").
  absl::Status RunWithTargets(const SampleInput& input, CounterRng* rng,
                              PipelineWorkspace* workspace, uint8_t* out,
                              SampleTargets* targets) const;
  // The canvas RunWithTargets wants for `input`'s targets: the decoded image's size, or for
  // encoded input the size its header says it decodes to without downscaling, read through
  // ops[0] (the decode op: its format and pixel-budget gates, so that masks sized by the canvas
  // are bounded by that budget). Errors: the decode op's bad-sample errors, prefixed as Run's.
  absl::StatusOr<ImageShape> TargetCanvas(const SampleInput& input,
                                          PipelineWorkspace* workspace) const;

 private:
  // The moves of one tracked run (RunWithTargets), from a source image of source size.
  struct TrackedMoves {
    TargetMoves moves;
    uint32_t source_height = 0;
    uint32_t source_width = 0;
    bool decode_downscaled = false;         // moves[0] is the decode's downscale
    const SampleTargets* source = nullptr;  // The targets at the source image
  };

  // One run between its steps (defined in pipeline.cc).
  struct RunState;

  Pipeline();

  // Run's body; with `tracked`, also collects the moves the ops make.
  absl::Status RunOps(const SampleInput& input, CounterRng* rng, PipelineWorkspace* workspace,
                      uint8_t* out, TrackedMoves* tracked) const;
  // Starts a run of `input`: decodes it (Decode) or checks its shape, and sets up op timing.
  absl::Status BeginRun(const SampleInput& input, CounterRng* rng, PipelineWorkspace* workspace,
                        RunState* state, TrackedMoves* tracked) const;
  // Starts a run of the suffix on `prefix_image` (RunSuffix). Errors: RunSuffix's own.
  absl::Status BeginSuffix(const ImageView& prefix_image, PipelineWorkspace* workspace,
                           RunState* state) const;
  // Runs ops_[state->next_op, end) in workspace buffers, except that with `out` set the run
  // holding out_writer_ writes it there (the output conversion is then the identity).
  absl::Status RunSteps(size_t end, uint8_t* out, CounterRng* rng, PipelineWorkspace* workspace,
                        RunState* state, TrackedMoves* tracked) const;
  // Runs the rest of the ops from `state` and writes the result to `out`.
  absl::Status RunToOutput(CounterRng* rng, PipelineWorkspace* workspace, uint8_t* out,
                           RunState* state, TrackedMoves* tracked) const;
  // The moves the prefix made of an image of `source` to give one of `prefix` (RunSuffixWith
  // Targets), into `tracked`.
  absl::Status ReplayPrefixMoves(const ImageShape& source, const ImageShape& prefix,
                                 TrackedMoves* tracked) const;
  // After a tracked run: checks the targets' canvas and moves them as `tracked` says.
  static absl::Status MoveTracked(TrackedMoves* tracked, SampleTargets* targets);

  // Runs ops_[0] (decode) on sample.encoded into workspace buffer 0; sets *decoded to it. When
  // fused, decodes only the window ops_[1] draws from `rng` where it can, and sets *window to
  // the part of *decoded that ops_[1] must get through ApplyToWindow (nullopt: run its Apply).
  // With `tracked`, sets its source size and appends the moves of the decode (a downscale) and,
  // when fused, of ops_[1].
  absl::Status Decode(const SampleInput& sample, CounterRng* rng, PipelineWorkspace* workspace,
                      ImageView* decoded, std::optional<PixelRect>* window,
                      TrackedMoves* tracked) const;
  // The fused branch of Decode for a JPEG whose full size is `shape`: false when ops_[1]
  // declines this input (nothing decoded, nothing drawn).
  bool DecodeWindow(const SampleInput& sample, const ImageShape& shape, CounterRng* rng,
                    PipelineWorkspace* workspace, absl::Status* status,
                    std::optional<PixelRect>* window, TargetMoves* moves) const;

  // Runs ops_[i, end) on `in` into `out`: a fused blur chain, ops_[1] on the window the fused
  // decode gave it, or op i alone (tracked when `tracked` is set; an op that chooses from boxes
  // gets `boxes`). Errors: the op's, unprefixed.
  absl::Status RunStep(size_t i, size_t end, const ImageView& in,
                       const std::optional<PixelRect>& window, absl::Span<const float> boxes,
                       CounterRng* rng, PipelineWorkspace* workspace, const ImageView& out,
                       TrackedMoves* tracked) const;
  // Writes the final image `image` to `out` in the output dtype and layout.
  void ConvertOutput(const ImageView& image, PipelineWorkspace* workspace, uint8_t* out) const;
  // The shape ops_[first, end) make of an image of `in`; errors are the first refusing op's
  // (OpError).
  absl::StatusOr<ImageShape> OutputShapeOf(size_t first, size_t end, const ImageShape& in) const;
  // OutputShapeOf, or for an op that draws its output size, the size it draws from a copy of
  // `rng` (with `boxes`); errors prefixed (OpError).
  absl::StatusOr<ImageShape> StepShape(size_t i, size_t end, const ImageShape& in,
                                       const CounterRng& rng, absl::Span<const float> boxes) const;
  // Runs ops_[first, end) (a fused blur chain: to_float or a blur, then blurs) on `in` into
  // `out`, drawing each blur's sigma in order.
  void RunBlurChain(size_t first, size_t end, const ImageView& in, CounterRng* rng,
                    PipelineWorkspace* workspace, const ImageView& out) const;

  std::vector<std::unique_ptr<Op>> ops_;
  // run_end_[i]: ops_[i, run_end_[i]) run as one fused blur chain when run_end_[i] > i + 1;
  // i + 1 for an op that runs alone (and for ops inside a chain, which Run never starts at).
  std::vector<size_t> run_end_;
  // The op that writes `out` when the output conversion is the identity (Compile says which).
  size_t out_writer_ = 0;
  // The table tail (above): ops_[tail_start_..] are replaced by tail_table_ (empty: none, and
  // tail_start_ is ops_.size()).
  size_t tail_start_ = 0;
  std::vector<float> tail_table_;
  // tail_table_ narrowed to the output's float16 or bfloat16 (empty for other outputs).
  std::vector<uint16_t> tail_table16_;
  bool encoded_input_ = false;
  bool fuse_decode_crop_ = false;
  bool with_targets_ = false;
  size_t prefix_ops_ = 0;
  uint64_t prefix_fingerprint_ = 0;
  ImageShape input_shape_;
  ImageShape result_shape_;
  stoker::v1::DType output_dtype_ = stoker::v1::DTYPE_UNSPECIFIED;
  stoker::v1::Layout output_layout_ = stoker::v1::LAYOUT_HWC;
  size_t output_bytes_per_sample_ = 0;
  std::optional<BatchMix> batch_mix_;
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_H_
