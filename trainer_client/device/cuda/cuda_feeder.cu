#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "trainer_client/device/cuda/convert_kernel.cuh"
#include "trainer_client/device/cuda/cuda_feeder.h"

namespace stoker {
namespace {

absl::Status CudaError(const char* call, cudaError_t error) {
  return absl::InternalError(absl::StrCat(call, ": ", cudaGetErrorString(error)));
}

#define STOKER_CUDA_RETURN_IF_ERROR(call)          \
  do {                                             \
    const cudaError_t stoker_cuda_error_ = (call); \
    if (stoker_cuda_error_ != cudaSuccess) {       \
      return CudaError(#call, stoker_cuda_error_); \
    }                                              \
  } while (0)

// One slot: pinned staging for the uint8 batch, device input and output, and two events: `ready`
// (copy and conversion done, on the feeder's stream) and `released` (the consumer's stream is
// done reading the output).
struct Slot {
  uint8_t* pinned = nullptr;
  uint8_t* device_in = nullptr;
  float* device_out = nullptr;
  size_t capacity = 0;  // input bytes the buffers hold
  cudaEvent_t ready = nullptr;
  cudaEvent_t released = nullptr;
};

// Thread-safe: a slot is touched only by the holder of the slot; the stream is thread-safe.
class CudaFeeder : public DeviceFeeder {
 public:
  CudaFeeder(const DeviceOptions& options, DeviceId device)
      : DeviceFeeder(options, device), device_(device), slots_(options.resident_batches) {}

  ~CudaFeeder() override {
    cudaSetDevice(device_.index);
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    for (Slot& slot : slots_) {
      FreeBuffers(slot);
      if (slot.ready != nullptr) cudaEventDestroy(slot.ready);
      if (slot.released != nullptr) cudaEventDestroy(slot.released);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  absl::Status Init() {
    STOKER_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.index));
    STOKER_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (Slot& slot : slots_) {
      STOKER_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&slot.ready, cudaEventDisableTiming));
      STOKER_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&slot.released, cudaEventDisableTiming));
    }
    return absl::OkStatus();
  }

 protected:
  absl::StatusOr<float*> ConvertInto(int index, const Batch& batch, const Geometry& geometry,
                                     const ChannelAffine& affine, void** ready_event) override {
    Slot& slot = slots_[index];
    STOKER_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.index));
    if (slot.capacity < geometry.input_bytes()) {
      if (absl::Status status = Grow(slot, geometry.input_bytes()); !status.ok()) return status;
    }
    // The previous copy out of this pinned buffer must be over before it is overwritten.
    STOKER_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(slot.ready));
    // Gathered straight from the received chunks: the payload's one copy on the client.
    batch.payload().CopyTo(slot.pinned, batch.size_bytes());
    // The consumer may still be reading this slot's previous output on its own stream.
    STOKER_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream_, slot.released, 0));
    STOKER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot.device_in, slot.pinned, geometry.input_bytes(),
                                                cudaMemcpyHostToDevice, stream_));
    STOKER_CUDA_RETURN_IF_ERROR(LaunchConvertHwcToChw(slot.device_in, geometry.n, geometry.h,
                                                      geometry.w, geometry.c, affine,
                                                      slot.device_out, stream_));
    STOKER_CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.ready, stream_));
    *ready_event = slot.ready;
    return slot.device_out;
  }

  void BeforeReuse(int index, void* consumer_stream) override {
    cudaSetDevice(device_.index);
    // An error here (a broken context) resurfaces from the next CUDA call in ConvertInto.
    cudaEventRecord(slots_[index].released, static_cast<cudaStream_t>(consumer_stream));
  }

 private:
  absl::Status Grow(Slot& slot, size_t bytes) {
    STOKER_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    FreeBuffers(slot);
    STOKER_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&slot.pinned, bytes, cudaHostAllocDefault));
    STOKER_CUDA_RETURN_IF_ERROR(cudaMalloc(&slot.device_in, bytes));
    STOKER_CUDA_RETURN_IF_ERROR(cudaMalloc(&slot.device_out, bytes * sizeof(float)));
    slot.capacity = bytes;
    return absl::OkStatus();
  }

  static void FreeBuffers(Slot& slot) {
    if (slot.pinned != nullptr) cudaFreeHost(slot.pinned);
    if (slot.device_in != nullptr) cudaFree(slot.device_in);
    if (slot.device_out != nullptr) cudaFree(slot.device_out);
    slot.pinned = nullptr;
    slot.device_in = nullptr;
    slot.device_out = nullptr;
    slot.capacity = 0;
  }

  const DeviceId device_;
  cudaStream_t stream_ = nullptr;
  std::vector<Slot> slots_;
};

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::string CudaPciBusId(int index) {
  char bus_id[32] = {};  // "dddd:bb:dd.f" and a NUL; NVML's own buffer is 32
  return cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), index) == cudaSuccess ? bus_id : "";
}

absl::StatusOr<std::unique_ptr<DeviceFeeder>> CreateCudaFeeder(const DeviceOptions& options,
                                                               DeviceId device) {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device ", options.device, ": no usable CUDA device (", cudaGetErrorString(error), ")"));
  }
  if (device.index >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("device ", options.device, ": only ", count, " CUDA device(s) present"));
  }
  auto feeder = std::make_unique<CudaFeeder>(options, device);
  if (absl::Status status = feeder->Init(); !status.ok()) return status;
  return std::unique_ptr<DeviceFeeder>(std::move(feeder));
}

}  // namespace stoker
