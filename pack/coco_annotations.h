#ifndef STOKER_PACK_COCO_ANNOTATIONS_H_
#define STOKER_PACK_COCO_ANNOTATIONS_H_

// A COCO instances file (stoker-pack --coco) read and checked: its images, each with its
// annotations (box, category, segmentation, keypoints), and its categories. Everything a record
// will hold is checked here, before any shard is written, and refused with the file and the
// reason ("instances.json: annotations[12] (id 907): bbox [10, 5, 900, 20] lies outside image 3
// (640x480)"): malformed JSON, a missing or mistyped key, an annotation of an image or category
// the file does not list, a box, polygon point or keypoint outside its image's canvas, an RLE
// mask of another size than its image or whose counts do not cover it exactly, an image or
// category listed twice, a mix of annotations with and without segmentations (or keypoints),
// and what would make the packer hold more than its bounds (below: pixels, instances,
// keypoints, mask bytes per image; polygon points; category ids).
//
// Crowd annotations (iscrowd = 1) are checked and then left out, as torchvision's detection
// references leave them out of the targets. Images are in id order, as torchvision's
// CocoDetection numbers them, and their annotations in file order.
//
// Thread-compatible value types.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker {

// The largest instances file read: parsing holds several times its size.
inline constexpr uint64_t kMaxCocoFileBytes = uint64_t{1} << 30;
// The most polygon points one annotation may have (filling costs points × rows).
inline constexpr size_t kMaxCocoPolygonPoints = 1 << 16;
// The largest category id: the manifest names the categories by id.
inline constexpr int64_t kMaxCocoCategoryId = 1 << 16;

// One annotation's segmentation: polygons (x1, y1, x2, y2, ... in pixels), or COCO's
// column-major run lengths of a mask of its image's size.
struct CocoSegmentation {
  std::vector<std::vector<double>> polygons;
  std::vector<uint32_t> rle_counts;  // Used when polygons is empty.
};

struct CocoAnnotation {
  int64_t id = 0;
  std::array<float, 4> box{};  // XYXY pixels: x, y, x + w, y + h.
  int64_t category_id = 0;
  std::optional<CocoSegmentation> segmentation;
  std::vector<float> keypoints;  // x, y, v per keypoint; empty: none.
};

struct CocoImage {
  int64_t id = 0;
  std::string file_name;  // Relative to the images folder.
  uint32_t width = 0;
  uint32_t height = 0;
  size_t index = 0;                         // In the file's images array.
  std::vector<CocoAnnotation> annotations;  // Crowd ones left out.
};

struct CocoDataset {
  std::vector<CocoImage> images;                            // By id.
  std::vector<std::pair<int64_t, std::string>> categories;  // (id, name), by id.
  bool has_masks = false;                                   // Annotations carry segmentations.
  uint32_t keypoints_per_instance = 0;                      // 0: annotations carry no keypoints.
};

// Limits on what the file may make the packer hold.
struct CocoLimits {
  uint64_t max_pixels = 50'000'000;  // An image's width × height.
  uint32_t max_instances = 128;      // Annotations an image keeps (kMaxTargetInstances).
  uint32_t max_keypoints = 64;       // Keypoints per annotation (kMaxKeypointsPerInstance).
  // An image's masks, one byte a pixel, annotations × width × height, when rasterized
  // (kMaxSampleMaskBytes).
  uint64_t max_mask_bytes = uint64_t{256} << 20;
};

// Reads the instances file text `json`, named `file` in errors. INVALID_ARGUMENT "FILE: ..."
// as above; nothing of the file's content is quoted but numbers and ids.
absl::StatusOr<CocoDataset> ParseCocoInstances(absl::string_view json, absl::string_view file,
                                               const CocoLimits& limits);

}  // namespace stoker

#endif  // STOKER_PACK_COCO_ANNOTATIONS_H_
