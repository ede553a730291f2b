#include "augment/kernels/decode.h"

#include <turbojpeg.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "augment/kernels/decode_jpeg_region.h"
#include "augment/kernels/decode_png_webp.h"
#include "common/bad_sample.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

absl::Status DecodeError(const std::string& what) {
  return BadSampleError(BadSampleReason::kDecodeError, what);
}

}  // namespace

ImageDecoder::ImageDecoder() = default;

ImageDecoder::~ImageDecoder() {
  if (jpeg_handle_ != nullptr) tjDestroy(static_cast<tjhandle>(jpeg_handle_));
}

absl::StatusOr<EncodedHeader> ImageDecoder::ReadHeader(absl::Span<const uint8_t> bytes,
                                                       const DecodeLimits& limits) {
  ASSIGN_OR_RETURN(const EncodedFormat format, SniffFormat(bytes));
  EncodedHeader header;
  if (format != EncodedFormat::kJpeg) {
    ASSIGN_OR_RETURN(header, ReadNonJpegHeader(bytes, format));
  } else {
    if (jpeg_handle_ == nullptr) jpeg_handle_ = tjInitDecompress();
    if (jpeg_handle_ == nullptr) return absl::InternalError("tjInitDecompress failed");
    int width = 0, height = 0, subsampling = 0, colorspace = 0;
    if (tjDecompressHeader3(static_cast<tjhandle>(jpeg_handle_), bytes.data(), bytes.size(), &width,
                            &height, &subsampling, &colorspace) != 0) {
      const absl::Status error = DecodeError(
          absl::StrCat("JPEG header: ", tjGetErrorStr2(static_cast<tjhandle>(jpeg_handle_))));
      // TurboJPEG 2.1 leaves the decompressor inside the failed header (it does not abort it),
      // and the next header read would resume there: every later JPEG failed the same way.
      tjDestroy(static_cast<tjhandle>(jpeg_handle_));
      jpeg_handle_ = nullptr;
      return error;
    }
    header = EncodedHeader{EncodedFormat::kJpeg, static_cast<uint32_t>(height),
                           static_cast<uint32_t>(width),
                           colorspace == TJCS_CMYK || colorspace == TJCS_YCCK};
  }
  RETURN_IF_ERROR(CheckPixelBudget(header, limits.max_pixels));
  if (format == EncodedFormat::kJpeg) {
    const int scans = CountJpegScans(bytes, limits.max_jpeg_scans);
    if (scans > limits.max_jpeg_scans) {
      return BadSampleError(
          BadSampleReason::kTooLarge,
          absl::StrCat("progressive JPEG has more than ", limits.max_jpeg_scans, " scans"));
    }
  }
  header_ = header;
  return header;
}

absl::Status ImageDecoder::Decode(absl::Span<const uint8_t> bytes, const ImageView& out) {
  if (header_.format == EncodedFormat::kJpeg) return DecodeJpeg(bytes, out);
  if (header_.format == EncodedFormat::kPng) return DecodePng(bytes, out, &scratch_);
  return DecodeWebp(bytes, out, &scratch_);
}

absl::Status ImageDecoder::DecodeJpegRegion(absl::Span<const uint8_t> bytes,
                                            const PixelRect& region, uint32_t denominator,
                                            uint32_t channels, ImageBuffer* out,
                                            PixelRect* window) {
  if (region_decoder_ == nullptr) region_decoder_ = std::make_unique<JpegRegionDecoder>();
  return region_decoder_->Decode(bytes, header_, region, denominator, channels, out, window);
}

absl::Status ImageDecoder::DecodeJpeg(absl::Span<const uint8_t> bytes, const ImageView& out) {
  if (!header_.cmyk) {
    return DecompressJpeg(bytes, out.shape, out.shape.channels == 3 ? TJPF_RGB : TJPF_GRAY,
                          out.pixels<uint8_t>());
  }
  // TurboJPEG hands CMYK (YCCK converted) as stored, without inverting; PIL's rules follow.
  scratch_.resize(size_t{out.shape.height} * out.shape.width * 4);
  RETURN_IF_ERROR(DecompressJpeg(bytes, out.shape, TJPF_CMYK, scratch_.data()));
  InvertedCmykToRgb(scratch_.data(), out);
  return absl::OkStatus();
}

absl::Status ImageDecoder::DecompressJpeg(absl::Span<const uint8_t> bytes, const ImageShape& size,
                                          int pixel_format, uint8_t* pixels) {
  tjhandle handle = static_cast<tjhandle>(jpeg_handle_);
  // tjDecompress2 picks the largest scaling factor whose output fits width × height, which for
  // ScaledSize(header, d) is exactly 1/d.
  if (tjDecompress2(handle, bytes.data(), bytes.size(), pixels, static_cast<int>(size.width),
                    /*pitch=*/0, static_cast<int>(size.height), pixel_format,
                    TJFLAG_LIMITSCANS) == 0) {
    return absl::OkStatus();
  }
  const char* message = tjGetErrorStr2(handle);
  if (tjGetErrorCode(handle) == TJERR_WARNING && std::strstr(message, "Premature end") == nullptr) {
    return absl::OkStatus();  // A whole image with a benign warning.
  }
  return DecodeError(absl::StrCat("JPEG: ", message));
}

void InvertedCmykToRgb(const uint8_t* cmyk, const ImageView& out) {
  const size_t pixels = size_t{out.shape.height} * out.shape.width;
  uint8_t* dst = out.pixels<uint8_t>();
  for (size_t i = 0; i < pixels; ++i, cmyk += 4) {
    // PIL unpacks "CMYK;I" as 255 - stored, then cmyk2rgb: nk = 255 - k,
    // channel = nk - MULDIV255(c, nk) with MULDIV255(a, b) = ((a*b+128) >> 8 + a*b+128) >> 8.
    const int nk = cmyk[3];  // 255 - (255 - stored k)
    uint8_t rgb[3];
    for (int c = 0; c < 3; ++c) {
      const int product = (255 - cmyk[c]) * nk + 128;
      rgb[c] = static_cast<uint8_t>(nk - (((product >> 8) + product) >> 8));
    }
    if (out.shape.channels == 3) {
      dst[3 * i] = rgb[0];
      dst[3 * i + 1] = rgb[1];
      dst[3 * i + 2] = rgb[2];
    } else {  // PIL's L24: ITU-R 601-2 weights in 16-bit fixed point.
      dst[i] =
          static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
    }
  }
}

}  // namespace stoker
