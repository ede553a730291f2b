#include "augment/kernels/decode.h"

#include <turbojpeg.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/status_macros.h"
#include "augment/kernels/decode_png_webp.h"

namespace stoker {
namespace {

absl::Status DecodeError(const std::string& what) {
  return BadSampleError(BadSampleReason::kDecodeError, what);
}

}  // namespace

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
    if (tjDecompressHeader3(static_cast<tjhandle>(jpeg_handle_), bytes.data(), bytes.size(),
                            &width, &height, &subsampling, &colorspace) != 0) {
      return DecodeError(
          absl::StrCat("JPEG header: ", tjGetErrorStr2(static_cast<tjhandle>(jpeg_handle_))));
    }
    header = EncodedHeader{EncodedFormat::kJpeg, static_cast<uint32_t>(height),
                           static_cast<uint32_t>(width)};
  }
  RETURN_IF_ERROR(CheckPixelBudget(header, limits.max_pixels));
  if (format == EncodedFormat::kJpeg) {
    const int scans = CountJpegScans(bytes, limits.max_jpeg_scans);
    if (scans > limits.max_jpeg_scans) {
      return BadSampleError(BadSampleReason::kTooLarge,
                            absl::StrCat("progressive JPEG has more than ", limits.max_jpeg_scans,
                                         " scans"));
    }
  }
  header_ = header;
  return header;
}

absl::Status ImageDecoder::Decode(absl::Span<const uint8_t> bytes, const ImageView& out) {
  if (header_.format == EncodedFormat::kJpeg) return DecodeJpeg(bytes, out);
  if (header_.format == EncodedFormat::kPng) return DecodePng(bytes, out);
  return DecodeWebp(bytes, out, &scratch_);
}

absl::Status ImageDecoder::DecodeJpeg(absl::Span<const uint8_t> bytes, const ImageView& out) {
  tjhandle handle = static_cast<tjhandle>(jpeg_handle_);
  const int pixel_format = out.shape.channels == 3 ? TJPF_RGB : TJPF_GRAY;
  // tjDecompress2 picks the largest scaling factor whose output fits width × height, which for
  // ScaledSize(header, d) is exactly 1/d.
  if (tjDecompress2(handle, bytes.data(), bytes.size(), out.pixels<unsigned char>(),
                    static_cast<int>(out.shape.width), /*pitch=*/0,
                    static_cast<int>(out.shape.height), pixel_format, TJFLAG_LIMITSCANS) == 0) {
    return absl::OkStatus();
  }
  const char* message = tjGetErrorStr2(handle);
  if (tjGetErrorCode(handle) == TJERR_WARNING && std::strstr(message, "Premature end") == nullptr) {
    return absl::OkStatus();  // A whole image with a benign warning.
  }
  return DecodeError(absl::StrCat("JPEG: ", message));
}

}  // namespace stoker
