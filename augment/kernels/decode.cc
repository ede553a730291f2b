#include "augment/kernels/decode.h"

#include <turbojpeg.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/status_macros.h"
#include "opencv2/core.hpp"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

absl::Status DecodeError(const std::string& what) {
  return BadSampleError(BadSampleReason::kDecodeError, what);
}

// PNG and WebP through OpenCV, straight into `out` (imdecode keeps a destination of the right
// size and type), then BGR → RGB in place.
absl::Status DecodeWithOpenCv(absl::Span<const uint8_t> bytes, const ImageView& out) {
  const bool color = out.shape.channels == 3;
  const int flags = (color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE) | cv::IMREAD_IGNORE_ORIENTATION;
  const int type = color ? CV_8UC3 : CV_8UC1;
  try {
    cv::Mat dst(static_cast<int>(out.shape.height), static_cast<int>(out.shape.width), type,
                out.data);
    const cv::Mat src(1, static_cast<int>(bytes.size()), CV_8UC1,
                      const_cast<uint8_t*>(bytes.data()));
    cv::Mat decoded = cv::imdecode(src, flags, &dst);
    if (decoded.empty()) return DecodeError("OpenCV could not decode the image");
    if (decoded.rows != dst.rows || decoded.cols != dst.cols || decoded.type() != type) {
      return DecodeError("decoded size differs from the header's");
    }
    if (decoded.data != out.data) decoded.copyTo(dst);
    if (color) cv::cvtColor(dst, dst, cv::COLOR_BGR2RGB);
  } catch (const cv::Exception& e) {
    return DecodeError(absl::StrCat("OpenCV: ", e.what()));
  }
  return absl::OkStatus();
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
  return DecodeWithOpenCv(bytes, out);
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
