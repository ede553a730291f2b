#include "augment/pipeline_prefix.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "augment/op.h"
#include "augment/pipeline.h"
#include "augment/pipeline_moves.h"
#include "common/stable_fingerprint.h"
#include "common/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace stoker {

size_t DecodedPrefixEnd(const std::vector<std::unique_ptr<Op>>& ops, size_t tail) {
  size_t end = 1;
  while (end < ops.size() && end < tail) {
    const Op& op = *ops[end];
    if (op.Draws() || op.ChoosesFromBoxes() || op.DrawsOutputSize() ||
        op.input_shape().type != PixelType::kUint8 || op.output_shape().type != PixelType::kUint8) {
      break;
    }
    ++end;
  }
  return end;
}

uint64_t DecodedPrefixFingerprint(const stoker::v1::PipelineSpec& spec, const InputFormat& input,
                                  size_t end) {
  StableFingerprint fingerprint;
  fingerprint.Add(uint64_t{kDecodedPrefixVersion})
      .Add(uint64_t{input.encoded ? 1u : 0u})
      .Add(uint64_t{input.shape.height})
      .Add(uint64_t{input.shape.width})
      .Add(uint64_t{input.shape.channels})
      .Add(static_cast<uint64_t>(input.shape.type));
  for (size_t i = 0; i < end; ++i) {
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      spec.ops(static_cast<int>(i)).SerializeToCodedStream(&coded);
    }
    fingerprint.Add(bytes);
  }
  return fingerprint.value();
}

namespace {

absl::Status NoPrefixError() {
  return absl::FailedPreconditionError(
      "the pipeline has no decoded prefix (compile it for encoded input with "
      "PipelineOptions::decoded_prefix)");
}

}  // namespace

absl::Status Pipeline::RunPrefix(const SampleInput& input, PipelineWorkspace* workspace,
                                 ImageView* result) const {
  if (prefix_ops_ == 0) {
    return NoPrefixError();
  }
  CounterRng no_draws = SampleRng(0, 0, 0);  // Prefix ops draw nothing; decode is not fused.
  RunState state;
  RETURN_IF_ERROR(BeginRun(input, &no_draws, workspace, &state, nullptr));
  RETURN_IF_ERROR(RunSteps(prefix_ops_, nullptr, &no_draws, workspace, &state, nullptr));
  *result = state.current;
  return absl::OkStatus();
}

absl::Status Pipeline::RunSuffix(const ImageView& prefix_image, CounterRng* rng,
                                 PipelineWorkspace* workspace, uint8_t* out) const {
  RunState state;
  RETURN_IF_ERROR(BeginSuffix(prefix_image, workspace, &state));
  return RunToOutput(rng, workspace, out, &state, nullptr);
}

absl::Status Pipeline::BeginSuffix(const ImageView& prefix_image, PipelineWorkspace* workspace,
                                   RunState* state) const {
  if (prefix_ops_ == 0) {
    return NoPrefixError();
  }
  const ImageShape& made = ops_[prefix_ops_ - 1]->output_shape();
  const ImageShape& got = prefix_image.shape;
  if (got.channels != made.channels || got.type != made.type ||
      (made.height != 0 && got.height != made.height) ||
      (made.width != 0 && got.width != made.width) || got.elements() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("prefix image is ", ImageShapeText(got),
                                                   ", the prefix makes ", ImageShapeText(made),
                                                   " (0: varies)"));
  }
  if (workspace->time_ops()) workspace->mutable_op_seconds().assign(ops_.size(), 0.0);
  state->input = prefix_image;
  state->current = prefix_image;
  state->next_op = prefix_ops_;
  return absl::OkStatus();
}

absl::Status Pipeline::ReplayPrefixMoves(const ImageShape& source, const ImageShape& prefix,
                                         TrackedMoves* tracked) const {
  tracked->source_height = source.height;
  tracked->source_width = source.width;
  EncodedHeader header;  // A JPEG's: the one format decoded at a DCT scale.
  header.height = source.height;
  header.width = source.width;
  const ImageShape full = ops_[0]->DecodedShape(header, nullptr);
  const ImageShape scaled =
      ops_[0]->DecodedShape(header, ops_.size() > 1 ? ops_[1].get() : nullptr);
  for (const ImageShape& decoded : {scaled, full}) {
    absl::StatusOr<ImageShape> made = OutputShapeOf(1, prefix_ops_, decoded);
    if (!made.ok() || *made != prefix) continue;
    TargetMoves& moves = tracked->moves;
    tracked->decode_downscaled = AppendDecodeMove(header, decoded, &moves);
    CounterRng no_draws = SampleRng(0, 0, 0);  // Prefix ops draw nothing.
    ImageShape shape = decoded;
    for (size_t i = 1; i < prefix_ops_; ++i) {
      ops_[i]->DrawTargetMoves(shape, &no_draws, &moves);
      shape = *ops_[i]->OutputShapeFor(shape);
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("the prefix does not make a ",
                                                 ImageShapeText(prefix), " image of source_shape ",
                                                 source.height, "x", source.width));
}

}  // namespace stoker
