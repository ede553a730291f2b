#include "augment/testing/test_image_codecs.h"

#include <string>

#include "opencv2/core.hpp"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

std::vector<uint8_t> EncodeWithOpenCv(const ImageView& image, const std::string& extension,
                                      const std::vector<int>& params) {
  try {
    const int type = image.shape.channels == 3 ? CV_8UC3 : CV_8UC1;
    cv::Mat rgb(static_cast<int>(image.shape.height), static_cast<int>(image.shape.width), type,
                image.data);
    cv::Mat bgr;
    if (image.shape.channels == 3) {
      cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    } else {
      bgr = rgb;
    }
    std::vector<uint8_t> bytes;
    if (!cv::imencode(extension, bgr, bytes, params)) return {};
    return bytes;
  } catch (const cv::Exception&) {
    return {};
  }
}

}  // namespace

std::vector<uint8_t> EncodePng(const ImageView& image) {
  return EncodeWithOpenCv(image, ".png", {});
}

std::vector<uint8_t> EncodeWebp(const ImageView& image) {
  return EncodeWithOpenCv(image, ".webp", {cv::IMWRITE_WEBP_QUALITY, 101});  // > 100: lossless.
}

}  // namespace stoker
