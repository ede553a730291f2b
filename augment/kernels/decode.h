#ifndef STOKER_AUGMENT_KERNELS_DECODE_H_
#define STOKER_AUGMENT_KERNELS_DECODE_H_

// Decoding of encoded images (docs/architecture.md, Bad input): JPEG through libjpeg-turbo's
// TurboJPEG API (the tj* v2 API of libjpeg-turbo 2.1), PNG and WebP through libpng and libwebp
// (decode_png_webp.h). Untrusted bytes go through three gates before any pixel memory is touched:
//
//   1. the format is allow-listed by its magic bytes (JPEG FF D8 FF, PNG's 8-byte signature,
//      RIFF....WEBP), otherwise kUnsupportedFormat;
//   2. the width and height are read from the header and width × height must not exceed the
//      pixel budget, otherwise kTooLarge;
//   3. a JPEG's start-of-scan markers are counted (libjpeg-turbo 2.1 has no scan-limit
//      parameter, only a fixed 500-scan flag, which is also set); more than the cap is kTooLarge.
//
// Every failure is a bad-sample error (common/bad_sample.h: DATA_LOSS with kUnsupportedFormat,
// kTooLarge or kDecodeError), so the worker replaces the sample instead of failing the batch.
// Decoder warnings that still yield a whole image (e.g. extraneous bytes before a marker) are
// accepted; a JPEG that ends early ("Premature end of JPEG file") is kDecodeError.
//
// Pixels come out HWC uint8, RGB (3 channels) or gray (1), whatever the file stores, converted
// the way PIL's Image.convert("RGB") does (so a pipeline translated from torchvision sees the
// pixels its PIL loader saw): a CMYK or YCCK JPEG is read with Adobe's inverted convention (as
// PIL assumes for every 4-channel JPEG) and turned into RGB with PIL's cmyk2rgb; alpha is
// dropped, never composited; palettes expand; 16-bit color keeps the high byte, 16-bit gray is
// clipped to 255 (PIL's "I" to "RGB"). Gray output from a color source uses PIL's "L" weights
// (ITU-R 601-2) except in the PNG and WebP paths (decode_png_webp.h). EXIF orientation is
// ignored. JPEGs can be decoded at 1/2, 1/4 or 1/8 scale in the DCT domain, and a JPEG's window
// alone (DecodeJpegRegion).

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "image/image.h"

namespace stoker {

class JpegRegionDecoder;  // decode_jpeg_region.h

enum class EncodedFormat { kJpeg, kPng, kWebp };

struct DecodeLimits {
  uint64_t max_pixels = 0;  // Width × height budget, > 0.
  int max_jpeg_scans = 0;   // Start-of-scan markers allowed in a JPEG, > 0.
};

// The decode op's defaults (and stoker-pack's, so it skips what a worker would reject).
inline constexpr uint32_t kDecodeDefaultMaxPixels = 50'000'000;
inline constexpr uint32_t kDecodeDefaultMaxScans = 100;

// What the header says, after the gates above.
struct EncodedHeader {
  EncodedFormat format = EncodedFormat::kJpeg;
  uint32_t height = 0;
  uint32_t width = 0;
  // A JPEG with four components (CMYK, or YCCK that libjpeg turns into CMYK).
  bool cmyk = false;
};

// Decodes one image at a time. Holds a TurboJPEG handle, created on first use and reused, so a
// warm decoder allocates nothing for JPEGs (libpng and libwebp allocate internally).
// Thread-compatible: one per thread.
class ImageDecoder {
 public:
  ImageDecoder();
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  // Runs the three gates on `bytes`. Errors: bad-sample errors as above; INTERNAL when the
  // TurboJPEG handle cannot be created.
  absl::StatusOr<EncodedHeader> ReadHeader(absl::Span<const uint8_t> bytes,
                                           const DecodeLimits& limits);

  // Decodes `bytes` into `out`.
  // REQUIRES: the last call on this decoder was a successful ReadHeader(bytes), which returned
  //   `header`; out.shape is uint8 with 1 or 3 channels and is ScaledSize(header, d, channels)
  //   where d is 1, or 2, 4 or 8 for a JPEG.
  // Errors: kDecodeError bad-sample errors.
  absl::Status Decode(absl::Span<const uint8_t> bytes, const ImageView& out);

  // Decodes only `region` of a JPEG as decoded at 1/denominator scale, without decoding the rest
  // (decode_jpeg_region.h says how, and what is still read): *out is Reshaped to the region's
  // rows of a span of columns containing it, and *window set to the region's place in *out.
  // Cut to *window, exactly the pixels of Decode into ScaledSize(header, denominator, channels)
  // cut to `region`.
  // REQUIRES: the last call on this decoder was a successful ReadHeader(bytes) that returned a
  //   JPEG header; denominator is 1, 2, 4 or 8; region is non-empty and inside
  //   ScaledSize(header, denominator, 1); channels is 1 or 3.
  // Errors: kDecodeError bad-sample errors; INTERNAL when libjpeg cannot be set up.
  absl::Status DecodeJpegRegion(absl::Span<const uint8_t> bytes, const PixelRect& region,
                                uint32_t denominator, uint32_t channels, ImageBuffer* out,
                                PixelRect* window);

  // The header the last successful ReadHeader returned.
  const EncodedHeader& header() const { return header_; }

 private:
  absl::Status DecodeJpeg(absl::Span<const uint8_t> bytes, const ImageView& out);
  // TurboJPEG into `out`'s pixels in `pixel_format` (a TJPF_*); accepts benign warnings.
  absl::Status DecompressJpeg(absl::Span<const uint8_t> bytes, const ImageShape& size,
                              int pixel_format, uint8_t* pixels);

  void* jpeg_handle_ = nullptr;  // tjhandle
  EncodedHeader header_;         // From the last ReadHeader.
  // RGB of a WebP decoded to gray; CMYK of a 4-channel JPEG; samples of a 16-bit gray PNG.
  std::vector<uint8_t> scratch_;
  // For DecodeJpegRegion, created on first use.
  std::unique_ptr<JpegRegionDecoder> region_decoder_;
};

// The gates one by one (ReadHeader runs them all).
// The format by magic bytes. Errors: kUnsupportedFormat.
absl::StatusOr<EncodedFormat> SniffFormat(absl::Span<const uint8_t> bytes);
// Width and height of a PNG or WebP. REQUIRES: SniffFormat(bytes) == format != kJpeg.
// Errors: kDecodeError when the header is truncated.
absl::StatusOr<EncodedHeader> ReadNonJpegHeader(absl::Span<const uint8_t> bytes,
                                                EncodedFormat format);
// Errors: kTooLarge over the budget, kDecodeError for a zero width or height.
absl::Status CheckPixelBudget(const EncodedHeader& header, uint64_t max_pixels);

// The size a decode at 1/denominator scale produces: ceil(height / d) × ceil(width / d).
inline ImageShape ScaledSize(const EncodedHeader& header, uint32_t denominator, uint32_t channels) {
  return ImageShape{(header.height + denominator - 1) / denominator,
                    (header.width + denominator - 1) / denominator, channels, PixelType::kUint8};
}

// PIL's conversion of the CMYK pixels a 4-component JPEG decodes to (Adobe-inverted, as PIL
// reads them: "CMYK;I") into RGB (3 channels) or gray (1, PIL's "L" from that RGB).
// REQUIRES: `cmyk` holds out.shape.height × out.shape.width × 4 bytes; out is uint8, 1 or 3
//   channels.
void InvertedCmykToRgb(const uint8_t* cmyk, const ImageView& out);

// The number of start-of-scan (SOS) markers in the JPEG `bytes`, stopping once `cap` is passed
// (one linear walk over the segments; a malformed or truncated segment ends the count).
int CountJpegScans(absl::Span<const uint8_t> bytes, int cap);

// The first 0xFF in [p, end - 1) that a byte other than 0x00 follows (a marker, or a fill byte
// before one), or null: how entropy-coded data is walked to the marker ending it (0x00 after
// 0xFF is stuffing). High-quality data holds an 0xFF every ~90 bytes, so a memchr per 0xFF cost
// more in calls than in scanning (about 3 % of a CLIP-recipe image between CountJpegScans and the
// restart cut); with SSE2 (every x86-64) 16 positions are tested at once.
const uint8_t* NextJpegMarker(const uint8_t* p, const uint8_t* end);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_DECODE_H_
