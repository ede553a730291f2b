#include "augment/pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/kernels/convert.h"
#include "augment/kernels/gaussian_blur.h"
#include "augment/kernels/half.h"
#include "augment/op.h"
#include "augment/op_registry.h"
#include "augment/pipeline_moves.h"
#include "augment/pipeline_prefix.h"
#include "augment/pipeline_tail_table.h"
#include "augment/targets/move_targets.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// The element type ConvertImage writes for `dtype`: float32 for the 16-bit floats, which are
// narrowed from it (ConvertToHalf).
PixelType PixelTypeOf(stoker::v1::DType dtype) {
  return dtype == stoker::v1::DTYPE_UINT8 ? PixelType::kUint8 : PixelType::kFloat32;
}

bool IsHalf(stoker::v1::DType dtype) {
  return dtype == stoker::v1::DTYPE_FLOAT16 || dtype == stoker::v1::DTYPE_BFLOAT16;
}

size_t DTypeBytes(stoker::v1::DType dtype) {
  return IsHalf(dtype) ? 2 : PixelTypeSize(PixelTypeOf(dtype));
}

// Writes `image` to `out` as float16 or bfloat16 in `layout`: straight from a float32 HWC image,
// else through float32 staging in the workspace's scratch (the layout change and any uint8 →
// float32 cast happen there).
void ConvertToHalf(const ImageView& image, OutputLayout layout, stoker::v1::DType dtype,
                   PipelineWorkspace* workspace, uint8_t* out) {
  const float* floats;
  if (layout == OutputLayout::kHwc && image.shape.type == PixelType::kFloat32) {
    floats = image.pixels<const float>();
  } else {
    ImageBuffer& staging = workspace->scratch();
    staging.Reshape(ImageShape{image.shape.height, image.shape.width, image.shape.channels,
                               PixelType::kFloat32});
    ConvertImage(image, layout, PixelType::kFloat32, staging.view().data);
    floats = staging.view().pixels<const float>();
  }
  if (dtype == stoker::v1::DTYPE_FLOAT16) {
    FloatToFloat16(floats, image.shape.elements(), out);
  } else {
    FloatToBfloat16(floats, image.shape.elements(), out);
  }
}

stoker::v1::DType DTypeOf(PixelType type) {
  return type == PixelType::kUint8 ? stoker::v1::DTYPE_UINT8 : stoker::v1::DTYPE_FLOAT32;
}

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// Prefixes an op's error with "pipeline.ops[i] (name): ", keeping its code and payloads (a
// bad-sample reason survives).
absl::Status OpError(size_t index, const Op& op, const absl::Status& status) {
  return PrefixStatus(absl::StrCat("pipeline.ops[", index, "] (", op.name(), "): "), status);
}

// DCT scales a window may be decoded at, largest first.
constexpr uint32_t kWindowDenominators[] = {8, 4, 2};

// The scale (1/d) at which `op` may get `window`: the largest d leaving the window at least d
// times the op's output size, or 1.
uint32_t WindowDenominator(const Op& op, const PixelRect& window) {
  if (!op.WindowMayBeDownscaled()) return 1;
  const ImageShape& out = op.output_shape();
  for (const uint32_t d : kWindowDenominators) {
    if (window.height / d >= out.height && window.width / d >= out.width) return d;
  }
  return 1;
}

// `window` in the pixels of the image's 1/d-scale decode, of size `scaled`: each edge moves to
// the nearest scaled pixel boundary (halves up), clamped, at least one pixel. Identity for d 1.
PixelRect ScaledWindow(const PixelRect& window, uint32_t d, const ImageShape& scaled) {
  const auto edge = [d](uint32_t x) { return (x + d / 2) / d; };
  const uint32_t top = std::min(edge(window.top), scaled.height - 1);
  const uint32_t left = std::min(edge(window.left), scaled.width - 1);
  const uint32_t bottom = std::clamp(edge(window.top + window.height), top + 1, scaled.height);
  const uint32_t right = std::clamp(edge(window.left + window.width), left + 1, scaled.width);
  return PixelRect{top, left, bottom - top, right - left};
}

// True when ops[i] may run in a fused blur chain (pipeline.h).
bool ChainsBlur(const Op& op) {
  const int ksize = op.BlurKsize();
  return ksize >= 3 && ksize <= kMaxBlurChainKsize;
}

// Pipeline::run_end_ for `ops` (of `spec`): each run of chainable blurs, with the to_float right
// before it, fused when it has two ops or more; each other op alone.
std::vector<size_t> BlurChainRuns(const stoker::v1::PipelineSpec& spec,
                                  const std::vector<std::unique_ptr<Op>>& ops, bool fuse) {
  std::vector<size_t> run_end(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) run_end[i] = i + 1;
  for (size_t i = 0; fuse && i < ops.size();) {
    const bool to_float = spec.ops(static_cast<int>(i)).has_to_float() && i + 1 < ops.size() &&
                          ChainsBlur(*ops[i + 1]);
    if (!to_float && !ChainsBlur(*ops[i])) {
      ++i;
      continue;
    }
    size_t end = to_float ? i + 1 : i;
    const size_t limit = end + kMaxBlurChain;
    while (end < ops.size() && end < limit && ChainsBlur(*ops[end])) ++end;
    if (end > i + 1) run_end[i] = end;
    i = end;
  }
  return run_end;
}

// The spec's output layout (HWC when unspecified).
absl::StatusOr<stoker::v1::Layout> SpecOutputLayout(const stoker::v1::PipelineSpec& spec) {
  switch (spec.output_layout()) {
    case stoker::v1::LAYOUT_UNSPECIFIED:
    case stoker::v1::LAYOUT_HWC:
      return stoker::v1::LAYOUT_HWC;
    case stoker::v1::LAYOUT_CHW:
      return stoker::v1::LAYOUT_CHW;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline.output_layout: unknown value ", spec.output_layout()));
  }
}

// The spec's output element type (the last op's when unspecified).
absl::StatusOr<stoker::v1::DType> SpecOutputDType(const stoker::v1::PipelineSpec& spec,
                                                  PixelType last_op_type) {
  switch (spec.output_dtype()) {
    case stoker::v1::DTYPE_UNSPECIFIED:
      return DTypeOf(last_op_type);
    case stoker::v1::DTYPE_UINT8:
    case stoker::v1::DTYPE_FLOAT32:
    case stoker::v1::DTYPE_FLOAT16:
    case stoker::v1::DTYPE_BFLOAT16:
      return spec.output_dtype();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline.output_dtype: unknown value ", spec.output_dtype()));
  }
}

// With targets, refuses an op that cannot move them; without, an op that needs the boxes.
absl::Status CheckTargetsFit(const Op& op, bool with_targets) {
  if (with_targets) return op.CheckMovesTargets();
  if (!op.ChoosesFromBoxes()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "chooses its crop from the sample's boxes, so the pipeline must be compiled with targets "
      "(PipelineOptions::with_targets)");
}

absl::Status NoTargetsError() {
  return absl::FailedPreconditionError(
      "the pipeline was compiled without targets (PipelineOptions::with_targets)");
}

}  // namespace

Pipeline::Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

absl::StatusOr<Pipeline> Pipeline::Compile(const stoker::v1::PipelineSpec& spec,
                                           const InputFormat& input,
                                           const PipelineOptions& options) {
  if (!input.encoded && input.shape.elements() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline input shape ", ImageShapeText(input.shape), " is empty"));
  }
  if (input.encoded && (spec.ops_size() == 0 || !spec.ops(0).has_decode())) {
    return absl::InvalidArgumentError(
        "pipeline.ops[0]: the dataset yields encoded images, so the first op must be decode");
  }
  Pipeline pipeline;
  pipeline.encoded_input_ = input.encoded;
  pipeline.input_shape_ = input.encoded ? ImageShape{} : input.shape;
  ImageShape shape = pipeline.input_shape_;
  for (int i = 0; i < spec.ops_size(); ++i) {
    if (spec.ops(i).has_decode() && (i != 0 || !input.encoded)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pipeline.ops[", i,
          "] (decode): decode must be the first op, and only for a dataset of encoded images"));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<Op> op, CreateOp(spec.ops(i), i, shape));
    if (absl::Status s = CheckTargetsFit(*op, options.with_targets); !s.ok()) {
      return OpError(i, *op, s);
    }
    shape = op->output_shape();
    pipeline.ops_.push_back(std::move(op));
  }
  if (shape.height == 0 || shape.width == 0) {
    return absl::InvalidArgumentError(
        "pipeline: the image size after the last op varies per sample (decoded images differ "
        "in size), but a batch needs one shape; end with an op of fixed output size: "
        "resize(height, width), center_crop, random_crop or random_resized_crop");
  }
  pipeline.result_shape_ = shape;
  pipeline.with_targets_ = options.with_targets;
  const size_t first_transform = input.encoded ? 1 : 0;
  if (options.decoded_prefix && input.encoded) {
    pipeline.prefix_ops_ =
        DecodedPrefixEnd(pipeline.ops_, TableTailStart(pipeline.ops_, first_transform));
    pipeline.prefix_fingerprint_ = DecodedPrefixFingerprint(spec, input, pipeline.prefix_ops_);
  }
  // Blurs take float32, so no blur chain reaches into a (uint8) decoded prefix.
  pipeline.run_end_ = BlurChainRuns(spec, pipeline.ops_, options.fuse_blur_chains);
  // The op that can write the final image: the last, or an earlier one when every op after it
  // works in place and keeps the final shape (e.g. horizontal_flip after a crop), so that those
  // run in place on `out` instead of copying into it; never a prefix op when there is a suffix
  // (RunSuffix starts after them).
  pipeline.out_writer_ = pipeline.ops_.empty() ? 0 : pipeline.ops_.size() - 1;
  const size_t first_writer = pipeline.prefix_ops_ < pipeline.ops_.size()
                                  ? std::max(first_transform, pipeline.prefix_ops_)
                                  : first_transform;
  while (pipeline.out_writer_ > first_writer) {
    const Op& op = *pipeline.ops_[pipeline.out_writer_];
    if (!op.SupportsInPlace() || op.input_shape() != shape || op.output_shape() != shape) break;
    --pipeline.out_writer_;
  }
  pipeline.fuse_decode_crop_ = options.fuse_decode_crop && !options.decoded_prefix &&
                               input.encoded && pipeline.ops_.size() > 1 &&
                               pipeline.ops_[1]->ReadsWindow();

  ASSIGN_OR_RETURN(pipeline.output_layout_, SpecOutputLayout(spec));
  ASSIGN_OR_RETURN(pipeline.output_dtype_, SpecOutputDType(spec, shape.type));
  pipeline.output_bytes_per_sample_ = shape.elements() * DTypeBytes(pipeline.output_dtype_);
  pipeline.tail_start_ = pipeline.ops_.size();
  const size_t tail = TableTailStart(pipeline.ops_, first_transform);
  if (tail < pipeline.ops_.size() && shape.type == PixelType::kFloat32 &&
      pipeline.output_dtype_ != stoker::v1::DTYPE_UINT8) {
    ASSIGN_OR_RETURN(pipeline.tail_table_, TailTable(pipeline.ops_, tail));
    pipeline.tail_start_ = tail;
    if (IsHalf(pipeline.output_dtype_)) {
      pipeline.tail_table16_ = NarrowedTable(pipeline.tail_table_, pipeline.output_dtype_);
    }
  }
  if (spec.has_batch_mix() && options.with_targets) {
    return absl::InvalidArgumentError(
        "pipeline.batch_mix: mixes images across samples and cannot mix boxes, masks or "
        "keypoints (torchvision v2's MixUp and CutMix refuse them too)");
  }
  if (spec.has_batch_mix()) {
    ASSIGN_OR_RETURN(
        pipeline.batch_mix_,
        BatchMix::Create(spec.batch_mix(), shape, pipeline.output_dtype_, pipeline.output_layout_));
  }
  return pipeline;
}

const std::string& Pipeline::op_name(size_t i) const { return ops_[i]->name(); }

bool Pipeline::may_decode_window_downscaled() const {
  return fuse_decode_crop_ && ops_[1]->WindowMayBeDownscaled();
}

bool Pipeline::fuses_blur_chains() const {
  for (size_t i = 0; i < run_end_.size(); ++i) {
    if (run_end_[i] > i + 1) return true;
  }
  return false;
}

std::vector<int64_t> Pipeline::BatchShape(int64_t batch_size) const {
  const int64_t h = result_shape_.height;
  const int64_t w = result_shape_.width;
  const int64_t c = result_shape_.channels;
  if (output_layout_ == stoker::v1::LAYOUT_CHW) return {batch_size, c, h, w};
  return {batch_size, h, w, c};
}

absl::Status Pipeline::Decode(const SampleInput& sample, CounterRng* rng,
                              PipelineWorkspace* workspace, ImageView* decoded,
                              std::optional<PixelRect>* window, TrackedMoves* tracked) const {
  const Op& decode = *ops_[0];
  const Op* next = ops_.size() > 1 ? ops_[1].get() : nullptr;
  absl::StatusOr<ImageShape> shape =
      decode.ReadEncoded(sample.encoded, next, &workspace->decoder());
  if (!shape.ok()) return OpError(0, decode, shape.status());
  ImageBuffer& buffer = workspace->buffer(0);
  absl::Status status;
  window->reset();
  TargetMoves* const moves = tracked != nullptr ? &tracked->moves : nullptr;
  if (tracked != nullptr) {
    const EncodedHeader& header = workspace->decoder().header();
    tracked->source_height = header.height;
    tracked->source_width = header.width;
  }
  if (!fuse_decode_crop_ || !DecodeWindow(sample, *shape, rng, workspace, &status, window, moves)) {
    buffer.Reshape(*shape);
    status = decode.DecodeInto(sample.encoded, &workspace->decoder(), buffer.view());
    if (moves != nullptr) {
      tracked->decode_downscaled = AppendDecodeMove(workspace->decoder().header(), *shape, moves);
    }
  }
  if (!status.ok()) return OpError(0, decode, status);
  *decoded = buffer.view();
  return absl::OkStatus();
}

bool Pipeline::DecodeWindow(const SampleInput& sample, const ImageShape& shape, CounterRng* rng,
                            PipelineWorkspace* workspace, absl::Status* status,
                            std::optional<PixelRect>* window, TargetMoves* moves) const {
  ImageDecoder& decoder = workspace->decoder();
  const Op& op = *ops_[1];
  // An image too small for the op fails on the unfused path, in the same order as unfused.
  if (decoder.header().format != EncodedFormat::kJpeg || !op.OutputShapeFor(shape).ok()) {
    return false;
  }
  const CounterRng before_window = *rng;
  const std::optional<PixelRect> drawn = op.DrawWindow(shape, rng);
  if (!drawn.has_value()) return false;
  const uint32_t denominator = WindowDenominator(op, *drawn);
  const ImageShape scaled = ScaledSize(decoder.header(), denominator, 1);
  const PixelRect region = ScaledWindow(*drawn, denominator, scaled);
  if (moves != nullptr) {
    AppendWindowMoves(op, shape, before_window, denominator, scaled, region, moves);
  }
  PixelRect in_buffer;
  *status = decoder.DecodeJpegRegion(sample.encoded, region, denominator, shape.channels,
                                     &workspace->buffer(0), &in_buffer);
  *window = in_buffer;
  return true;
}

// The state of one run between its steps.
struct Pipeline::RunState {
  ImageView input;  // Never written: the sample's image, or a kept prefix image (RunSuffix).
  ImageView current;
  std::optional<PixelRect> window;  // Set when ops_[1] gets a window decoded alone.
  size_t next_op = 0;
  int next_buffer = 0;
};

absl::Status Pipeline::Run(const SampleInput& sample, CounterRng* rng, PipelineWorkspace* workspace,
                           uint8_t* out) const {
  return RunOps(sample, rng, workspace, out, nullptr);
}

absl::Status Pipeline::RunWithTargets(const SampleInput& input, CounterRng* rng,
                                      PipelineWorkspace* workspace, uint8_t* out,
                                      SampleTargets* targets) const {
  if (!with_targets_) {
    return NoTargetsError();
  }
  RETURN_IF_ERROR(ValidateTargets(*targets));
  TrackedMoves tracked;
  tracked.source_height = input.image.shape.height;  // Decode sets it for encoded input.
  tracked.source_width = input.image.shape.width;
  tracked.source = targets;
  RETURN_IF_ERROR(RunOps(input, rng, workspace, out, &tracked));
  return MoveTracked(&tracked, targets);
}

absl::Status Pipeline::MoveTracked(TrackedMoves* tracked, SampleTargets* targets) {
  if (targets->canvas_height != tracked->source_height ||
      targets->canvas_width != tracked->source_width) {
    return absl::InvalidArgumentError(absl::StrCat(
        "targets.canvas_size ", targets->canvas_height, "x", targets->canvas_width,
        " differs from the image's ", tracked->source_height, "x", tracked->source_width));
  }
  if (tracked->decode_downscaled) MergeFirstResizes(&tracked->moves);
  return MoveTargets(tracked->moves, targets);
}

absl::StatusOr<ImageShape> Pipeline::TargetCanvas(const SampleInput& input,
                                                  PipelineWorkspace* workspace) const {
  if (!encoded_input_) return input.image.shape;
  // No next op: the full size, never a DCT-downscaled one.
  absl::StatusOr<ImageShape> shape =
      ops_[0]->ReadEncoded(input.encoded, nullptr, &workspace->decoder());
  if (!shape.ok()) return OpError(0, *ops_[0], shape.status());
  return *shape;
}

absl::Status Pipeline::RunSuffixWithTargets(const ImageView& prefix_image,
                                            const ImageShape& source_shape, CounterRng* rng,
                                            PipelineWorkspace* workspace, uint8_t* out,
                                            SampleTargets* targets) const {
  if (!with_targets_) {
    return NoTargetsError();
  }
  RunState state;
  RETURN_IF_ERROR(BeginSuffix(prefix_image, workspace, &state));
  RETURN_IF_ERROR(ValidateTargets(*targets));
  TrackedMoves tracked;
  tracked.source = targets;
  RETURN_IF_ERROR(ReplayPrefixMoves(source_shape, prefix_image.shape, &tracked));
  RETURN_IF_ERROR(RunToOutput(rng, workspace, out, &state, &tracked));
  return MoveTracked(&tracked, targets);
}

absl::Status Pipeline::RunOps(const SampleInput& sample, CounterRng* rng,
                              PipelineWorkspace* workspace, uint8_t* out,
                              TrackedMoves* tracked) const {
  RunState state;
  RETURN_IF_ERROR(BeginRun(sample, rng, workspace, &state, tracked));
  return RunToOutput(rng, workspace, out, &state, tracked);
}

absl::Status Pipeline::BeginRun(const SampleInput& sample, CounterRng* rng,
                                PipelineWorkspace* workspace, RunState* state,
                                TrackedMoves* tracked) const {
  state->input = sample.image;
  state->current = sample.image;
  const bool timed = workspace->time_ops();
  if (timed) workspace->mutable_op_seconds().assign(ops_.size(), 0.0);
  if (encoded_input_) {
    Clock* const clock = workspace->clock();
    const absl::Time start = timed ? clock->Now() : absl::InfinitePast();
    RETURN_IF_ERROR(Decode(sample, rng, workspace, &state->current, &state->window, tracked));
    if (timed) workspace->mutable_op_seconds()[0] = absl::ToDoubleSeconds(clock->Now() - start);
    state->next_op = 1;
    state->next_buffer = 1;
  } else if (sample.image.shape != input_shape_) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline input is ", ImageShapeText(sample.image.shape), ", compiled for ",
                     ImageShapeText(input_shape_)));
  }
  return absl::OkStatus();
}

absl::Status Pipeline::RunToOutput(CounterRng* rng, PipelineWorkspace* workspace, uint8_t* out,
                                   RunState* state, TrackedMoves* tracked) const {
  const PixelType out_type = PixelTypeOf(output_dtype_);
  const bool half = IsHalf(output_dtype_);
  const bool out_aligned = IsAligned(out, PixelTypeSize(out_type));
  const OutputLayout layout =
      output_layout_ == stoker::v1::LAYOUT_CHW ? OutputLayout::kChw : OutputLayout::kHwc;
  // With a table tail, the ops before it run, then the table writes `out` in its layout (16-bit
  // floats: from their own table, with no alignment needed).
  const bool tabled = !tail_table_.empty() && (out_aligned || half);
  const size_t end_op = tabled ? tail_start_ : ops_.size();
  // When the output conversion is the identity, out_writer_ writes straight into `out` and the
  // ops after it run there in place.
  const bool last_op_writes_out = !tabled && ops_.size() > state->next_op && !half &&
                                  output_layout_ == stoker::v1::LAYOUT_HWC &&
                                  out_type == result_shape_.type && out_aligned;
  RETURN_IF_ERROR(
      RunSteps(end_op, last_op_writes_out ? out : nullptr, rng, workspace, state, tracked));
  if (last_op_writes_out) return absl::OkStatus();
  const ImageView& current = state->current;
  if (tabled) {
    const bool timed = workspace->time_ops();
    Clock* const clock = workspace->clock();
    const absl::Time start = timed ? clock->Now() : absl::InfinitePast();
    if (half) {
      ConvertThroughTable16(current, tail_table16_.data(), layout, out);
    } else {
      ConvertThroughTable(current, tail_table_.data(), layout, reinterpret_cast<float*>(out));
    }
    if (timed) {
      workspace->mutable_op_seconds()[tail_start_] = absl::ToDoubleSeconds(clock->Now() - start);
    }
    return absl::OkStatus();
  }
  ConvertOutput(current, workspace, out);
  return absl::OkStatus();
}

absl::Status Pipeline::RunSteps(size_t end_op, uint8_t* out, CounterRng* rng,
                                PipelineWorkspace* workspace, RunState* state,
                                TrackedMoves* tracked) const {
  const bool timed = workspace->time_ops();
  std::vector<double>& op_seconds = workspace->mutable_op_seconds();
  Clock* const clock = workspace->clock();
  absl::Time op_start = absl::InfinitePast();
  for (size_t i = state->next_op; i < end_op;) {
    const Op& op = *ops_[i];
    const size_t end = run_end_[i];  // ops_[i, end) run as one (a fused blur chain), or op i
    std::vector<float> boxes;  // The sample's boxes at this step, for an op that chooses by them
    if (tracked != nullptr && op.ChoosesFromBoxes()) {
      ASSIGN_OR_RETURN(boxes,
                       BoxesAfter(*tracked->source, tracked->moves, tracked->decode_downscaled));
    }
    ASSIGN_OR_RETURN(const ImageShape shape, StepShape(i, end, state->current.shape, *rng, boxes));
    ImageView target;
    if (out != nullptr && i <= out_writer_ && out_writer_ < end) {
      target = ImageView{out, shape};  // the run that writes the final image
    } else if (end == i + 1 && op.SupportsInPlace() && state->current.data != state->input.data) {
      target = ImageView{state->current.data, shape};  // A workspace buffer (or `out`): reuse it.
    } else {
      ImageBuffer& buffer = workspace->buffer(state->next_buffer);
      state->next_buffer ^= 1;
      buffer.Reshape(shape);
      target = buffer.view();
    }
    if (timed) op_start = clock->Now();
    const absl::Status status =
        RunStep(i, end, state->current, state->window, boxes, rng, workspace, target, tracked);
    if (!status.ok()) return OpError(i, op, status);
    if (timed) op_seconds[i] = absl::ToDoubleSeconds(clock->Now() - op_start);
    state->current = target;
    i = end;
  }
  state->next_op = std::max(state->next_op, end_op);
  return absl::OkStatus();
}

absl::Status Pipeline::RunStep(size_t i, size_t end, const ImageView& in,
                               const std::optional<PixelRect>& window,
                               absl::Span<const float> boxes, CounterRng* rng,
                               PipelineWorkspace* workspace, const ImageView& out,
                               TrackedMoves* tracked) const {
  const Op& op = *ops_[i];
  if (end > i + 1) {
    RunBlurChain(i, end, in, rng, workspace, out);
    return absl::OkStatus();
  }
  if (i == 1 && window.has_value()) return op.ApplyToWindow(in, *window, out);
  if (tracked != nullptr && op.ChoosesFromBoxes()) {
    return op.ApplyTrackedWithBoxes(in, boxes, rng, out, &tracked->moves);
  }
  if (tracked != nullptr) {
    return op.ApplyTracked(in, rng, &workspace->scratch(), out, &tracked->moves);
  }
  return op.Apply(in, rng, &workspace->scratch(), out);
}

void Pipeline::ConvertOutput(const ImageView& image, PipelineWorkspace* workspace,
                             uint8_t* out) const {
  const PixelType out_type = PixelTypeOf(output_dtype_);
  const OutputLayout layout =
      output_layout_ == stoker::v1::LAYOUT_CHW ? OutputLayout::kChw : OutputLayout::kHwc;
  if (IsHalf(output_dtype_)) {
    ConvertToHalf(image, layout, output_dtype_, workspace, out);  // unaligned stores: any `out`
  } else if (IsAligned(out, PixelTypeSize(out_type))) {
    ConvertImage(image, layout, out_type, out);
  } else {
    // Convert into aligned staging memory, then copy the bytes.
    ImageBuffer& staging = workspace->scratch();
    staging.Reshape(
        ImageShape{result_shape_.height, result_shape_.width, result_shape_.channels, out_type});
    ConvertImage(image, layout, out_type, staging.view().data);
    std::memcpy(out, staging.view().data, output_bytes_per_sample_);
  }
}

absl::StatusOr<ImageShape> Pipeline::StepShape(size_t i, size_t end, const ImageShape& in,
                                               const CounterRng& rng,
                                               absl::Span<const float> boxes) const {
  if (end != i + 1 || !ops_[i]->DrawsOutputSize()) return OutputShapeOf(i, end, in);
  absl::StatusOr<ImageShape> shape = ops_[i]->DrawOutputShape(in, rng, boxes);
  if (!shape.ok()) return OpError(i, *ops_[i], shape.status());
  return shape;
}

absl::StatusOr<ImageShape> Pipeline::OutputShapeOf(size_t first, size_t end,
                                                   const ImageShape& in) const {
  ImageShape shape = in;
  for (size_t j = first; j < end; ++j) {
    absl::StatusOr<ImageShape> next = ops_[j]->OutputShapeFor(shape);
    if (!next.ok()) return OpError(j, *ops_[j], next.status());
    shape = *next;
  }
  return shape;
}

void Pipeline::RunBlurChain(size_t first, size_t end, const ImageView& in, CounterRng* rng,
                            PipelineWorkspace* workspace, const ImageView& out) const {
  const size_t first_blur = ops_[first]->BlurKsize() > 0 ? first : first + 1;  // else to_float
  const int count = static_cast<int>(end - first_blur);
  int ksizes[kMaxBlurChain];
  for (int k = 0; k < count; ++k) ksizes[k] = ops_[first_blur + k]->BlurKsize();
  // Scratch: [drawn weights, kMaxBlurChainKsize floats per blur | the chain's rings and rows].
  const size_t weight_floats = size_t{kMaxBlurChain} * kMaxBlurChainKsize;
  const size_t floats = weight_floats + GaussianBlurChainScratchFloats(in.shape, ksizes, count);
  ImageBuffer& scratch = workspace->scratch();
  scratch.Reshape(ImageShape{1, static_cast<uint32_t>(floats), 1, PixelType::kFloat32});
  float* drawn = scratch.view().pixels<float>();
  const float* weights[kMaxBlurChain];
  for (int k = 0; k < count; ++k) {
    weights[k] = ops_[first_blur + k]->BlurWeights(rng, drawn + k * kMaxBlurChainKsize);
  }
  GaussianBlurChain(in, weights, ksizes, count, drawn + weight_floats, out);
}

}  // namespace stoker
