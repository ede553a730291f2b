// Fuzz target: the fused decode of a JPEG window (augment/kernels/decode_jpeg_region.h) on
// arbitrary bytes, with the restart-interval cut of jpeg_restart_window.h it takes first when
// the file has restart markers, at a budget small enough for the fuzzer (1 Mpixel).
//
// Input: five bytes choosing the window (top, left, height, width as fractions of the image,
// in 256ths) and the output (bit 0: gray or RGB; bits 1-2: scale 1, 2, 4 or 8), then the image.
// Invariants checked: a cut is a JPEG (SOI first, EOI last) whose origin is at or above and
// left of the window; every refusal of the decode is a bad-sample DATA_LOSS.

#include <algorithm>

#include "augment/kernels/decode.h"
#include "augment/kernels/jpeg_restart_window.h"
#include "image/image.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// The part `fraction`/256 of `extent`, at least one pixel.
uint32_t Part(uint8_t fraction, uint32_t extent) {
  return std::max<uint32_t>(1, static_cast<uint32_t>(uint64_t{extent} * fraction / 256));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint32_t channels = (data[4] & 1) ? 1 : 3;
  const uint32_t denominator = 1u << ((data[4] >> 1) & 3);
  const absl::Span<const uint8_t> bytes(data + 5, size - 5);
  const stoker::DecodeLimits limits{1u << 20, 100};
  static stoker::ImageDecoder* decoder = new stoker::ImageDecoder();  // reused, as a worker does
  absl::StatusOr<stoker::EncodedHeader> header = decoder->ReadHeader(bytes, limits);
  if (!header.ok() || header->format != stoker::EncodedFormat::kJpeg) return 0;
  const stoker::ImageShape scaled = stoker::ScaledSize(*header, denominator, channels);
  stoker::PixelRect region;
  region.top = std::min(scaled.height - 1, Part(data[0], scaled.height) - 1);
  region.left = std::min(scaled.width - 1, Part(data[1], scaled.width) - 1);
  region.height = std::min(scaled.height - region.top, Part(data[2], scaled.height));
  region.width = std::min(scaled.width - region.left, Part(data[3], scaled.width));

  static stoker::RestartCut* cut = new stoker::RestartCut();
  if (stoker::CutToRestartIntervals(bytes, region, denominator, cut)) {
    const std::vector<uint8_t>& jpeg = cut->jpeg;
    FUZZ_CHECK(jpeg.size() >= 4 && jpeg[0] == 0xFF && jpeg[1] == 0xD8);
    FUZZ_CHECK(jpeg[jpeg.size() - 2] == 0xFF && jpeg.back() == 0xD9);
    FUZZ_CHECK(cut->top <= region.top && cut->left <= region.left);
  }
  stoker::ImageBuffer span;
  stoker::PixelRect window;
  const absl::Status decoded =
      decoder->DecodeJpegRegion(bytes, region, denominator, channels, &span, &window);
  if (!decoded.ok()) FUZZ_CHECK(decoded.code() == absl::StatusCode::kDataLoss);
  return 0;
}
