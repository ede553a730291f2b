#ifndef STOKER_PACK_SEG_MASK_FIELDS_H_
#define STOKER_PACK_SEG_MASK_FIELDS_H_

// Semantic segmentation sets (stoker-pack --seg-masks): each image's label map, the sidecar of the
// same name with extension .seg.png ("street/001.jpg" → "street/001.seg.png", as a WebDataset
// keys it), stored byte for byte as its "semantic_mask" field (the PNG is the stored form,
// augment/targets/target_codec.h). An image without one is skipped (reason "missing_seg_mask").
// A label map a worker would refuse stops the run naming its file and why: not a PNG, not 8-bit
// gray or palette (DecodePngLabels), or another size than its image.
//
// Thread-safe: each input's label map size is kept between Read and CheckStoredImage in its own
// slot.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pack/pack_fields.h"

namespace stoker {

class SegMaskFields : public PackFields {
 public:
  explicit SegMaskFields(size_t inputs) : sizes_(inputs) {}

  std::vector<std::string> names() const override;
  absl::Status Read(const Storage& storage, size_t index, const PackInput& input,
                    RecordFields* fields, SkippedInput* skip) const override;
  absl::Status CheckStoredImage(size_t index, const PackInput& input,
                                absl::Span<const uint8_t> image, InputChecker* checker,
                                SkippedInput* skip) const override;

 private:
  // Input i's label map as height << 32 | width, from Read.
  mutable std::vector<std::atomic<uint64_t>> sizes_;
};

// "dir/001.jpg" → "dir/001.seg.png".
std::string SegMaskSidecar(const std::string& image_path);

}  // namespace stoker

#endif  // STOKER_PACK_SEG_MASK_FIELDS_H_
