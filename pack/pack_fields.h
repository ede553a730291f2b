#ifndef STOKER_PACK_PACK_FIELDS_H_
#define STOKER_PACK_PACK_FIELDS_H_

// What stoker-pack stores beside each image as its record's fields (data/record_fields.h), and
// the manifest declares (ShardManifest.fields): captions (pack/caption_fields.h) or COCO targets
// (pack/coco_fields.h). The packer asks for an input's fields before it reads the image, and
// shows the image as it will be stored (after any re-encoding) before it writes the record; a
// value over MaxStoredFieldValueBytes skips the input (too_large), as a worker would reject it.
//
// Thread-safe: shards are written in parallel.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "data/record_fields.h"
#include "pack/input_check.h"
#include "pack/pack_plan.h"

namespace stoker {

class PackFields {
 public:
  virtual ~PackFields() = default;

  // The fields every record carries, in the manifest's order.
  virtual std::vector<std::string> names() const = 0;

  // The fields of the plan's input `index`, or a skip reason when it has none. An error stops
  // the run (UNAVAILABLE: an I/O error a rerun may not meet).
  virtual absl::Status Read(const Storage& storage, size_t index, const PackInput& input,
                            RecordFields* fields, SkippedInput* skip) const = 0;

  // Checks input `index`'s image as it will be stored (`checker` reads its header). An error
  // stops the run; a skip reason skips the input. Default: any image.
  virtual absl::Status CheckStoredImage(size_t index, const PackInput& input,
                                        absl::Span<const uint8_t> image, InputChecker* checker,
                                        SkippedInput* skip) const {
    return absl::OkStatus();
  }
};

}  // namespace stoker

#endif  // STOKER_PACK_PACK_FIELDS_H_
