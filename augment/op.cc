#include "augment/op.h"

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

const float* Op::BlurWeights(CounterRng* rng, float* drawn) const { return nullptr; }

}  // namespace stoker
