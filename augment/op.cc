#include "augment/op.h"

#include "augment/op_registry.h"

namespace stoker {

absl::StatusOr<ImageShape> Op::OutputShapeFor(const ImageShape& in) const {
  ImageShape out = output_shape_;
  if (out.height == 0) out.height = in.height;
  if (out.width == 0) out.width = in.width;
  return out;
}

absl::StatusOr<ImageShape> Op::ReadEncoded(absl::Span<const uint8_t> bytes, const Op* next,
                                           ImageDecoder* decoder) const {
  return absl::InternalError(name_ + " does not take encoded input");
}

ImageShape Op::DecodedShape(const EncodedHeader& header, const Op* next) const {
  return ImageShape{};  // Only decode takes encoded input.
}

absl::Status Op::DecodeInto(absl::Span<const uint8_t> bytes, ImageDecoder* decoder,
                            const ImageView& out) const {
  return absl::InternalError(name_ + " does not take encoded input");
}

std::optional<PixelRect> Op::DrawWindow(const ImageShape& in, CounterRng* rng) const {
  return std::nullopt;
}

absl::Status Op::ApplyToWindow(const ImageView& in, const PixelRect& window,
                               const ImageView& out) const {
  return absl::InternalError(name_ + " does not read a window");
}

bool Op::Draws() const {
  const OpSchema* schema = FindOpSchema(name_);
  return schema == nullptr || schema->draws != RngDraws::kNever;
}

absl::Status Op::CheckMovesTargets() const {
  const OpSchema* schema = FindOpSchema(name_);
  if (schema != nullptr && schema->targets != TargetSupport::kRefused) return absl::OkStatus();
  return absl::InvalidArgumentError("moves pixels and cannot move boxes, masks or keypoints");
}

void Op::DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const {}

absl::Status Op::ApplyTracked(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                              const ImageView& out, TargetMoves* moves) const {
  CounterRng probe = *rng;
  DrawTargetMoves(in.shape, &probe, moves);
  return Apply(in, rng, scratch, out);
}

absl::StatusOr<ImageShape> Op::DrawOutputShape(const ImageShape& in, CounterRng rng,
                                               absl::Span<const float> boxes) const {
  return OutputShapeFor(in);
}

absl::Status Op::ApplyTrackedWithBoxes(const ImageView& in, absl::Span<const float> boxes,
                                       CounterRng* rng, const ImageView& out,
                                       TargetMoves* moves) const {
  return absl::InternalError(name_ + " does not choose from boxes");
}

const float* Op::BlurWeights(CounterRng* rng, float* drawn) const { return nullptr; }

}  // namespace stoker
