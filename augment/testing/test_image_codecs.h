#ifndef STOKER_AUGMENT_TESTING_TEST_IMAGE_CODECS_H_
#define STOKER_AUGMENT_TESTING_TEST_IMAGE_CODECS_H_

// PNG and WebP test images, encoded through OpenCV's imgcodecs: apart from
// augment/synthetic_images.h so that shipping code using its natural images and JPEGs (pipeline
// explain) does not link imgcodecs and its dependencies (GDAL, GDCM, x265: ~240 MB in every
// container image).

#include <cstdint>
#include <vector>

#include "image/image.h"

namespace stoker {

// Encodes uint8 `image` losslessly (PNG; WebP lossless) through OpenCV. Empty on failure.
std::vector<uint8_t> EncodePng(const ImageView& image);
std::vector<uint8_t> EncodeWebp(const ImageView& image);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TESTING_TEST_IMAGE_CODECS_H_
