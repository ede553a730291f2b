#ifndef STOKER_DATA_SOURCE_H_
#define STOKER_DATA_SOURCE_H_

// Where samples come from. A Source turns a dataset index into a decoded image and a label.

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "augment/image.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// Thread-safe: Read may be called concurrently with different buffers.
class Source {
 public:
  virtual ~Source() = default;

  // Number of samples N.
  virtual uint64_t size() const = 0;
  // Shape of every image this source yields (fixed for every source in this version).
  virtual ImageShape image_shape() const = 0;
  // Fills `image` (reshaping it, reusing its storage) and `*label` for sample `index`.
  // OUT_OF_RANGE when index >= size().
  virtual absl::Status Read(uint64_t index, ImageBuffer* image, int64_t* label) const = 0;
};

// INVALID_ARGUMENT naming the field when the spec is not usable, e.g.
// "dataset.synthetic.height must be > 0".
absl::Status ValidateDatasetSpec(const stoker::v1::DatasetSpec& spec);

// Shape of the images the dataset yields, without opening it. Errors as ValidateDatasetSpec.
absl::StatusOr<ImageShape> DatasetImageShape(const stoker::v1::DatasetSpec& spec);

// Opens the dataset. `seed` is the job's seed (synthetic pixels depend on it). Errors as
// ValidateDatasetSpec.
absl::StatusOr<std::unique_ptr<Source>> CreateSource(const stoker::v1::DatasetSpec& spec,
                                                     uint64_t seed);

}  // namespace stoker

#endif  // STOKER_DATA_SOURCE_H_
