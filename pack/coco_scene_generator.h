#ifndef STOKER_PACK_COCO_SCENE_GENERATOR_H_
#define STOKER_PACK_COCO_SCENE_GENERATOR_H_

// COCO-style test sets, nothing downloaded (stoker-gen-images --coco-images, the --coco tests):
// scenes of flat-coloured shapes on a natural background (GenerateNaturalImage), each shape in
// its own cell of a 2 × 2 grid so none hides another, written as PNGs and JPEGs and an instances
// file whose boxes and masks are exactly what was drawn. Each shape kind has its own category
// and segmentation form, so a set exercises all of them:
//   1 "box"       an integer rectangle, a polygon of its 4 corners
//   2 "triangle"  a polygon with quarter-pixel corners, filled by pack/coco_masks.h's rule
//   3 "slab"      an integer rectangle, uncompressed RLE
//   7 "disc"      an ellipse, compressed RLE (category 4..6 unused: ids need not be dense)
// A shape's box is its polygon's bounds, or its mask's pixels' bounds for RLE; each annotation
// has one keypoint, its box's centre (visible), and every fifth image (index % 5 == 4) none.
// A pure function of (seed, index, size).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "opencv2/core.hpp"

namespace stoker {

struct CocoSceneObject {
  int64_t category_id = 0;
  std::array<float, 4> box{};  // XYXY pixels.
  std::vector<uint8_t> mask;   // Row-major, height × width, 0 or 1.
  std::string segmentation;    // Its JSON, as the instances file holds it.
};

struct CocoScene {
  int64_t image_id = 0;
  std::string file_name;  // "images/000003.png"
  int width = 0;
  int height = 0;
  cv::Mat image;  // BGR uint8, width × height.
  std::vector<CocoSceneObject> objects;
};

// Scene `index` (image id index + 1; PNG for even indices, JPEG for odd, or JPEG for all with
// `all_jpeg`) of width × height. REQUIRES: width, height >= 16.
CocoScene GenerateCocoScene(uint64_t seed, uint32_t index, int width, int height,
                            bool all_jpeg = false);

// The instances file of `scenes` (images, annotations with ids from 1, categories).
std::string CocoInstancesJson(const std::vector<CocoScene>& scenes);

struct CocoSetSpec {
  std::string dir;       // Created: dir/images/..., dir/instances.json.
  uint32_t images = 10;  // > 0.
  int width = 160;       // >= 16.
  int height = 120;      // >= 16.
  uint64_t seed = 1;
  bool all_jpeg = false;  // Every image a JPEG (the benchmarks' sets), not PNG and JPEG in turn.
};

// Writes the set. INVALID_ARGUMENT naming the field for a bad spec; UNAVAILABLE naming the path
// on a write error.
absl::Status WriteCocoSet(const CocoSetSpec& spec);

}  // namespace stoker

#endif  // STOKER_PACK_COCO_SCENE_GENERATOR_H_
