#include "trainer_client/python/dlpack_capsule.h"

#include <utility>

namespace stoker {
namespace {

namespace py = pybind11;

constexpr char kCapsuleName[] = "dltensor";

struct ManagedContext {
  dlpack::DLManagedTensor managed;
  std::shared_ptr<const void> keep_alive;  // owns the memory managed.dl_tensor.data points at
  std::vector<int64_t> shape;
};

void DeleteManaged(dlpack::DLManagedTensor* self) {
  delete static_cast<ManagedContext*>(self->manager_ctx);
}

void DestroyCapsule(PyObject* capsule) {
  // Still named "dltensor": never consumed, so the deleter is ours to call.
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  auto* managed =
      static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  managed->deleter(managed);
}

}  // namespace

py::capsule MakeDlpackCapsule(const void* data, dlpack::DLDevice device, dlpack::DLDataType dtype,
                              std::vector<int64_t> shape, std::shared_ptr<const void> keep_alive) {
  auto* context = new ManagedContext;
  context->keep_alive = std::move(keep_alive);
  context->shape = std::move(shape);
  dlpack::DLTensor& tensor = context->managed.dl_tensor;
  tensor.data = const_cast<void*>(data);
  tensor.device = device;
  tensor.ndim = static_cast<int32_t>(context->shape.size());
  tensor.dtype = dtype;
  tensor.shape = context->shape.data();
  tensor.strides = nullptr;
  tensor.byte_offset = 0;
  context->managed.manager_ctx = context;
  context->managed.deleter = &DeleteManaged;
  PyObject* capsule = PyCapsule_New(&context->managed, kCapsuleName, &DestroyCapsule);
  if (capsule == nullptr) {
    delete context;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

}  // namespace stoker
