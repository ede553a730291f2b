#include "augment/kernels/resize.h"

#include "absl/strings/str_cat.h"
#include "augment/kernels/resize_antialias.h"
#include "augment/kernels/resize_linear_rgb.h"
#include "opencv2/core.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

int CvType(const ImageShape& shape) {
  const int depth = shape.type == PixelType::kUint8 ? CV_8U : CV_32F;
  return CV_MAKETYPE(depth, static_cast<int>(shape.channels));
}

cv::Mat MatOf(const ImageView& view) {
  return cv::Mat(static_cast<int>(view.shape.height), static_cast<int>(view.shape.width),
                 CvType(view.shape), view.data);
}

}  // namespace

absl::Status Resize(const ImageView& in, const PixelRect& region, Interpolation interpolation,
                    const ImageView& out) {
  if (interpolation == Interpolation::kAntialias) {
    ResizeAntialiased(in, region, out);
    return absl::OkStatus();
  }
  if (interpolation == Interpolation::kBilinear &&
      ResizeLinearRgbApplies(in.shape, region, out.shape)) {
    ResizeLinearRgb(in, region, out);  // cv::resize's result, without its overhead
    return absl::OkStatus();
  }
  try {
    const cv::Mat src =
        MatOf(in)(cv::Rect(static_cast<int>(region.left), static_cast<int>(region.top),
                           static_cast<int>(region.width), static_cast<int>(region.height)));
    cv::Mat dst = MatOf(out);
    cv::resize(src, dst, dst.size(), 0, 0,
               interpolation == Interpolation::kArea ? cv::INTER_AREA : cv::INTER_LINEAR);
    if (dst.data != out.data) return absl::InternalError("cv::resize reallocated its output");
  } catch (const cv::Exception& e) {
    return absl::InternalError(absl::StrCat("cv::resize: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace stoker
