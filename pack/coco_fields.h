#ifndef STOKER_PACK_COCO_FIELDS_H_
#define STOKER_PACK_COCO_FIELDS_H_

// COCO detection and segmentation sets packed with their targets (stoker-pack
// --coco=INSTANCES.json --input=IMAGES; docs/decisions/0067-coco-packing.md). Each image of the
// instances file (pack/coco_annotations.h: checked whole before anything is written) is one
// record, in image id order: its file (IMAGES/file_name) stored as packed otherwise, label -1
// (none: its classes are its boxes' labels), and its targets as fields
// (augment/targets/target_codec.h, EncodeStoredTargets): "boxes" (x, y, x + w, y + h pixels),
// "box_labels" (category_id), "masks" (one per annotation at the image's size: polygons filled
// by pack/coco_masks.h's rule, RLE decoded) when the annotations have segmentations,
// "keypoints" when they have keypoints. An image without annotations has zero boxes. The
// manifest declares those fields and names the categories (class_names[category_id], "" for
// unused ids). An image whose file decodes to another size than the file says stops the run.
//
// Thread-safe; immutable once made.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "augment/targets/targets.h"
#include "pack/coco_annotations.h"
#include "pack/pack_fields.h"

namespace stoker {

class CocoFields : public PackFields {
 public:
  // `dataset` read from the instances file named `file`; input i of the plan is image i.
  CocoFields(std::string file, CocoDataset dataset);

  std::vector<std::string> names() const override;
  absl::Status Read(const Storage& storage, size_t index, const PackInput& input,
                    RecordFields* fields, SkippedInput* skip) const override;
  // INVALID_ARGUMENT "FILE: images[i] (id N): its image decodes to WxH, not the WxH the file
  // says"; a skip (decode_error) when its header does not read.
  absl::Status CheckStoredImage(size_t index, const PackInput& input,
                                absl::Span<const uint8_t> image, InputChecker* checker,
                                SkippedInput* skip) const override;

  const CocoDataset& dataset() const { return dataset_; }

 private:
  const std::string file_;
  const CocoDataset dataset_;
};

// The targets of `image`: its boxes and labels, its masks rasterized when the dataset has
// masks, its keypoints when it has keypoints. INVALID_ARGUMENT when an RLE does not cover the
// image (ParseCocoInstances refuses those).
absl::StatusOr<SampleTargets> CocoImageTargets(const CocoImage& image, const CocoDataset& dataset);

// Reads options.coco through `storage` and plans one input per image (options.input/file_name),
// the fields a CocoFields. INVALID_ARGUMENT naming the file and what it holds wrong (above, a
// file over kMaxCocoFileBytes, no image); NOT_FOUND naming an image file that does not exist;
// the storage's errors.
absl::StatusOr<PackPlan> PlanCocoPack(const Storage& storage, const PackOptions& options);

}  // namespace stoker

#endif  // STOKER_PACK_COCO_FIELDS_H_
