#ifndef STOKER_AUGMENT_SYNTHETIC_IMAGES_H_
#define STOKER_AUGMENT_SYNTHETIC_IMAGES_H_

// Synthetic images: natural-looking pixels (gradients, shapes, noise, so that JPEG sizes and
// decode times resemble photos') and their JPEG encoding. Shipping code, not a test helper:
// pipeline explain (augment/pipeline_explain.h) times pipelines on them; tests and benchmarks
// use them too (PNG and WebP test encodings: augment/testing/test_image_codecs.h).
// Thread-safe.

#include <cstdint>
#include <vector>

#include "image/image.h"

namespace stoker {

// A height × width × channels uint8 HWC image, RGB when 3 channels, the same for the same seed.
std::vector<uint8_t> NaturalImage(uint32_t height, uint32_t width, uint32_t channels,
                                  uint64_t seed);

// Chroma subsampling of a color JPEG (horizontal x vertical): 4:4:4 none, 4:2:2 2x1, 4:2:0 2x2,
// 4:4:0 1x2, 4:1:1 4x1.
enum class ChromaSubsampling { k444, k422, k420, k440, k411 };

// Encodes uint8 `image` (1 or 3 channels) with libjpeg-turbo at `quality`, with `subsampling`
// for color, baseline or progressive. Empty on failure.
std::vector<uint8_t> EncodeJpeg(const ImageView& image, int quality, bool progressive = false,
                                ChromaSubsampling subsampling = ChromaSubsampling::k420);

}  // namespace stoker

#endif  // STOKER_AUGMENT_SYNTHETIC_IMAGES_H_
