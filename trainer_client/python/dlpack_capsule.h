#ifndef STOKER_TRAINER_CLIENT_PYTHON_DLPACK_CAPSULE_H_
#define STOKER_TRAINER_CLIENT_PYTHON_DLPACK_CAPSULE_H_

// A "dltensor" PyCapsule over memory the caller keeps alive: the DLManagedTensor's context holds
// `keep_alive` (and the shape), released by the deleter when the consumer frees the tensor, or
// when the capsule is destroyed unconsumed. The shape must already be checked against the
// memory (dlpack_shapes.h). Throws py::error_already_set when Python cannot make the capsule.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "trainer_client/python/dlpack_abi.h"

namespace stoker {

pybind11::capsule MakeDlpackCapsule(const void* data, dlpack::DLDevice device,
                                    dlpack::DLDataType dtype, std::vector<int64_t> shape,
                                    std::shared_ptr<const void> keep_alive);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_PYTHON_DLPACK_CAPSULE_H_
