#ifndef STOKER_TRAINER_CLIENT_DEVICE_DEVICE_FEEDER_H_
#define STOKER_TRAINER_CLIENT_DEVICE_DEVICE_FEEDER_H_

// Puts received batches where the trainer computes, converted for it: uint8 HWC on the wire
// (4× fewer bytes than float32), float32 CHW normalized on arrival, (x / 255 − mean) / std.
//
//   ASSIGN_OR_RETURN(auto feeder, DeviceFeeder::Create(options));   // device "cuda:0" or "cpu"
//   for (const Batch& batch : loader->Epoch()) {
//     ASSIGN_OR_RETURN(DeviceTensor images, feeder->Convert(batch));
//     cudaStreamWaitEvent(compute_stream, (cudaEvent_t)images.ready_event(), 0);  // CUDA only
//     TrainStep(images.data(), images.batch().labels(), compute_stream);
//     images.Release(compute_stream);   // the slot is reused once that stream is past this point
//   }
//
// On CUDA each of `resident_batches` slots owns a pinned host staging buffer and device buffers;
// Convert copies the batch into pinned memory, queues the host-to-device copy and the conversion
// kernel on the feeder's own stream and records the slot's ready event, so copies overlap the
// trainer's compute on its stream. On the CPU the same conversion runs on the calling thread.
// Either way at most resident_batches converted batches exist at once: Convert waits for one to
// be released.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "trainer_client/batch.h"
#include "trainer_client/device/convert.h"
#include "trainer_client/device/device_options.h"

namespace stoker {

class DeviceFeeder;

// A converted batch in one of the feeder's slots. Move-only; destroying it releases the slot as
// Release() does. Thread-compatible.
class DeviceTensor {
 public:
  DeviceTensor() = default;
  DeviceTensor(DeviceTensor&& other) noexcept;
  DeviceTensor& operator=(DeviceTensor&& other) noexcept;
  ~DeviceTensor() { Release(); }

  // float32 [N, C, H, W] on device(): CUDA device memory, or host memory for the CPU.
  float* data() const { return data_; }
  absl::Span<const int64_t> shape() const { return shape_; }
  DeviceId device() const { return device_; }
  // CUDA: the cudaEvent_t (as void*) recorded once the copy and conversion are done; make the
  // compute stream wait on it before reading data(). nullptr on the CPU (data is ready).
  void* ready_event() const { return ready_event_; }
  // The received batch: labels, sample indices, task.
  const Batch& batch() const { return batch_; }

  // Gives the slot back for reuse once the work queued so far on `consumer_stream` (a
  // cudaStream_t; nullptr = CUDA's legacy default stream; ignored on the CPU) is done reading
  // data(). Idempotent; data() must not be used afterwards.
  void Release(void* consumer_stream = nullptr);

 private:
  friend class DeviceFeeder;
  DeviceFeeder* feeder_ = nullptr;
  int slot_ = -1;
  float* data_ = nullptr;
  std::vector<int64_t> shape_;
  DeviceId device_;
  void* ready_event_ = nullptr;
  Batch batch_;
};

// Thread-safe.
class DeviceFeeder {
 public:
  // Errors: INVALID_ARGUMENT from options.Validate(); FAILED_PRECONDITION when a CUDA device is
  // asked for and cannot be used (a build without CUDA, no driver, no such device), with CUDA's
  // reason.
  static absl::StatusOr<std::unique_ptr<DeviceFeeder>> Create(const DeviceOptions& options);
  virtual ~DeviceFeeder() = default;

  // Converts `batch` (uint8 [N, H, W, C], C <= 4) into a free slot, waiting for one while
  // resident_batches tensors are held. Errors: INVALID_ARGUMENT for another dtype, layout,
  // channel count or a payload size other than N*H*W*C; CANCELLED after Stop(); INTERNAL naming
  // the CUDA call that failed.
  absl::StatusOr<DeviceTensor> Convert(const Batch& batch);

  // Wakes and fails every waiting and later Convert with CANCELLED. Tensors already returned
  // stay valid until released.
  void Stop();

  const DeviceOptions& options() const { return options_; }

 protected:
  DeviceFeeder(DeviceOptions options, DeviceId device);

  struct Geometry {
    int64_t n, h, w, c;
    size_t input_bytes() const { return static_cast<size_t>(n * h * w * c); }
    size_t output_bytes() const { return input_bytes() * sizeof(float); }
  };
  // Converts `batch` into `slot`; returns the output pointer and sets *ready_event (nullptr when
  // the data is ready on return).
  virtual absl::StatusOr<float*> ConvertInto(int slot, const Batch& batch, const Geometry& geometry,
                                             const ChannelAffine& affine, void** ready_event) = 0;
  // Called by Release before the slot is free again: e.g. record when the consumer is done.
  virtual void BeforeReuse(int slot, void* consumer_stream) = 0;

 private:
  friend class DeviceTensor;
  void ReleaseSlot(int slot, void* consumer_stream);

  const DeviceOptions options_;
  const DeviceId device_;
  absl::Mutex mu_;
  std::vector<int> free_slots_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

// The PCI bus id of `device` when it is "cuda" or "cuda:N" ("0000:3b:00.0"), for
// NvmlGpuUtilizationSampler::Open (gpu_utilization.h); empty for the CPU, a bad device, a build
// without CUDA, or when CUDA cannot say (no driver, no such device).
std::string CudaPciBusIdOf(const std::string& device);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_DEVICE_FEEDER_H_
