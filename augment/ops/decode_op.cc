// decode: encoded bytes (JPEG, PNG, WebP) → uint8 HWC image, RGB or gray. The first op of a
// pipeline whose dataset yields encoded samples, and only there.

#include <memory>

#include "augment/kernels/decode.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr uint32_t kDefaultChannels = 3;
constexpr uint32_t kDefaultMaxPixels = kDecodeDefaultMaxPixels;
constexpr uint32_t kDefaultMaxScans = kDecodeDefaultMaxScans;
constexpr uint32_t kDctDenominators[] = {8, 4, 2};

class DecodeOp final : public Op {
 public:
  // REQUIRES: channels is 1 or 3; limits are > 0.
  DecodeOp(uint32_t channels, const DecodeLimits& limits)
      : Op("decode", ImageShape{}, ImageShape{0, 0, channels, PixelType::kUint8}),
        channels_(channels),
        limits_(limits) {}

  bool TakesEncodedInput() const override { return true; }

  absl::StatusOr<ImageShape> ReadEncoded(absl::Span<const uint8_t> bytes, const Op* next,
                                         ImageDecoder* decoder) const override {
    ASSIGN_OR_RETURN(const EncodedHeader header, decoder->ReadHeader(bytes, limits_));
    return DecodedShape(header, next);
  }

  ImageShape DecodedShape(const EncodedHeader& header, const Op* next) const override {
    if (header.format == EncodedFormat::kJpeg && next != nullptr && next->ResamplesWholeImage()) {
      for (const uint32_t denominator : kDctDenominators) {
        const ImageShape scaled = ScaledSize(header, denominator, channels_);
        const absl::StatusOr<ImageShape> wanted = next->OutputShapeFor(scaled);
        if (wanted.ok() && scaled.height >= wanted->height && scaled.width >= wanted->width) {
          return scaled;
        }
      }
    }
    return ScaledSize(header, 1, channels_);
  }

  absl::Status DecodeInto(absl::Span<const uint8_t> bytes, ImageDecoder* decoder,
                          const ImageView& out) const override {
    return decoder->Decode(bytes, out);
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    return absl::InternalError("decode runs on encoded bytes (DecodeInto), not on an image");
  }

 private:
  const uint32_t channels_;
  const DecodeLimits limits_;
};

absl::StatusOr<std::unique_ptr<Op>> CreateDecodeOp(const stoker::v1::Op& op,
                                                   const ImageShape& input) {
  const stoker::v1::DecodeOp& args = op.decode();
  const uint32_t channels = args.channels() == 0 ? kDefaultChannels : args.channels();
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat("channels must be 1 or 3, got ", channels));
  }
  DecodeLimits limits;
  limits.max_pixels = args.max_pixels() == 0 ? kDefaultMaxPixels : args.max_pixels();
  limits.max_jpeg_scans =
      static_cast<int>(args.max_scans() == 0 ? kDefaultMaxScans : args.max_scans());
  return std::make_unique<DecodeOp>(channels, limits);
}

}  // namespace

OpSchema DecodeOpSchema() {
  return OpSchema{
      "decode",
      stoker::v1::Op::kDecode,
      "Decodes a JPEG (libjpeg-turbo), PNG (libpng) or WebP (libwebp) sample into a uint8 image, "
      "RGB or gray, converted as PIL's convert(\"RGB\") does (CMYK/YCCK JPEGs, 16-bit, palette "
      "and alpha PNGs, alpha dropped). Must be the first op, and only for datasets of encoded "
      "images. Other formats, images "
      "over max_pixels and JPEGs with more than max_scans scans are bad samples (replaced). "
      "Before a resize that shrinks at least 2x, JPEGs are decoded at 1/2, 1/4 or 1/8 scale in "
      "the DCT domain (never below the resize's output size). Before center_crop, random_crop "
      "or random_resized_crop only the crop's window of a JPEG is decoded (same bytes; a "
      "bilinear or area random_resized_crop window of 2x the output or more also at a DCT "
      "scale).",
      {
          {"channels", ArgType::kInt, "3", "1 (gray) or 3 (RGB)."},
          {"max_pixels", ArgType::kInt, "50000000", "Width x height budget, from the header."},
          {"max_scans", ArgType::kInt, "100", "Most scans allowed in a (progressive) JPEG."},
      },
      &CreateDecodeOp,
      {"`Image.open(f).convert(\"RGB\")` (PIL)", "bytes → uint8",
       "equal bytes (augment/kernels/decode_pil_test.cc)"},
      TargetSupport::kUnchanged,
      RngDraws::kNever};
}

}  // namespace stoker
