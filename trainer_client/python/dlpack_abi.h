#ifndef STOKER_TRAINER_CLIENT_PYTHON_DLPACK_ABI_H_
#define STOKER_TRAINER_CLIENT_PYTHON_DLPACK_ABI_H_

// The DLPack ABI (https://github.com/dmlc/dlpack, include/dlpack/dlpack.h, versions 0.5–0.8: the
// unversioned DLManagedTensor that torch 1.13's from_dlpack consumes), written out here because
// Debian ships no dlpack.h outside libtorch-dev. Only the layout matters: these structs must stay
// bit-identical to the upstream ones.
//
// Exchange protocol: a PyCapsule named "dltensor" holds a DLManagedTensor*. The consumer renames
// the capsule "used_dltensor" and calls `deleter` when it no longer needs the memory; a capsule
// that is destroyed while still named "dltensor" was never consumed, and its destructor calls
// `deleter` itself.

#include <cstdint>

namespace stoker {
namespace dlpack {

enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
};

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
};

struct DLDataType {
  uint8_t code;    // DLDataTypeCode
  uint8_t bits;    // 8, 16, 32, 64
  uint16_t lanes;  // 1 for scalars
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // nullptr: compact row-major
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

static_assert(sizeof(DLDevice) == 8, "DLDevice layout");
static_assert(sizeof(DLDataType) == 4, "DLDataType layout");
static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");

}  // namespace dlpack
}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_PYTHON_DLPACK_ABI_H_
