#ifndef STOKER_PACK_IMAGE_GENERATOR_H_
#define STOKER_PACK_IMAGE_GENERATOR_H_

// Natural-looking test images for the JPEG workload (docs/architecture.md, Reference workloads):
// smooth gradients, soft low-frequency texture, blurred and sharp shapes, sensor-like noise;
// colours lean per class so classes differ. A pure function of (seed, label, index): the same call
// gives the same pixels. Used by tests, scripts/demo.sh --jpeg and the jpeg-pipeline benchmark.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "opencv2/core.hpp"

namespace stoker {

// A BGR uint8 image of width × height.
cv::Mat GenerateNaturalImage(uint64_t seed, uint32_t label, uint64_t index, int width, int height);

struct ImageFolderSpec {
  std::string dir;           // Created if missing; one subfolder per class ("class-003").
  uint32_t classes = 10;     // > 0.
  uint32_t per_class = 300;  // > 0.
  int width = 500;           // > 0.
  int height = 375;          // > 0.
  int quality = 90;          // JPEG quality 1..100.
  uint64_t seed = 1;
  uint32_t threads = 0;  // 0: one per core.
};

// Writes dir/class-LLL/img-IIIII.jpg for every class and index. Files already there are kept,
// so a second call is cheap (a cache). UNAVAILABLE naming the path on a write error,
// INVALID_ARGUMENT naming the field for a bad spec.
absl::Status GenerateImageFolder(const ImageFolderSpec& spec);

}  // namespace stoker

#endif  // STOKER_PACK_IMAGE_GENERATOR_H_
