#ifndef STOKER_TRAINER_CLIENT_PYTHON_DLPACK_SHAPES_H_
#define STOKER_TRAINER_CLIENT_PYTHON_DLPACK_SHAPES_H_

// The shapes of the DLPack tensors the Python module makes over a Batch's bytes, each checked
// against the bytes it views: the module hands out no capsule whose shape times its element size
// exceeds its buffer, whatever the batch's header says (the Loader checked it already:
// wire/batch_check.h; this is the boundary's own check). Free of pybind11.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer_client/batch.h"

namespace stoker {

// The images: the header's shape, when CheckBatchHeader accepts it for the payload's size.
// DATA_LOSS naming the field otherwise.
absl::StatusOr<std::vector<int64_t>> ImagesDlpackShape(const Batch& batch);

// The soft labels: [num_samples, num_classes], which must cover the soft labels exactly.
// FAILED_PRECONDITION when the batch has none; DATA_LOSS when they are not whole rows.
absl::StatusOr<std::vector<int64_t>> SoftLabelsDlpackShape(const Batch& batch);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_PYTHON_DLPACK_SHAPES_H_
