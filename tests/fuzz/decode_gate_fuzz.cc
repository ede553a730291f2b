// Fuzz target: the decode gates (augment/kernels/decode.h) on arbitrary sample bytes: format by
// magic (JPEG, PNG, WebP), the header's size against the pixel budget, the JPEG scan count, and
// then the decode itself of what passed, at a budget small enough for the fuzzer (1 Mpixel).
//
// Input: one byte choosing the output (gray or RGB; JPEG scale 1, 2, 4 or 8), then the image.
// Invariants checked: every refusal is a bad-sample DATA_LOSS; an accepted header is within the
// budget.

#include "augment/kernels/decode.h"
#include "image/image.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint32_t channels = (data[0] & 1) ? 1 : 3;
  const absl::Span<const uint8_t> bytes(data + 1, size - 1);
  const stoker::DecodeLimits limits{1u << 20, 100};
  static stoker::ImageDecoder* decoder = new stoker::ImageDecoder();  // reused, as a worker does
  absl::StatusOr<stoker::EncodedHeader> header = decoder->ReadHeader(bytes, limits);
  if (!header.ok()) {
    FUZZ_CHECK(header.status().code() == absl::StatusCode::kDataLoss);
    return 0;
  }
  FUZZ_CHECK(uint64_t{header->width} * header->height <= limits.max_pixels);
  const uint32_t denominator =
      header->format == stoker::EncodedFormat::kJpeg ? 1u << ((data[0] >> 1) & 3) : 1;
  stoker::ImageBuffer out;
  out.Reshape(stoker::ScaledSize(*header, denominator, channels));
  const absl::Status decoded = decoder->Decode(bytes, out.view());
  if (!decoded.ok()) FUZZ_CHECK(decoded.code() == absl::StatusCode::kDataLoss);
  return 0;
}
