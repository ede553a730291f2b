#ifndef STOKER_TRAINER_CLIENT_DEVICE_DEVICE_OPTIONS_H_
#define STOKER_TRAINER_CLIENT_DEVICE_DEVICE_OPTIONS_H_

// Where and how a DeviceFeeder (device_feeder.h) puts batches for the trainer's compute.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace stoker {

enum class DeviceKind { kCpu, kCuda };

struct DeviceId {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;  // CUDA device ordinal; 0 for the CPU.
};

// "cpu", "cuda" (= cuda:0) or "cuda:N". INVALID_ARGUMENT naming `device` otherwise.
absl::StatusOr<DeviceId> ParseDevice(const std::string& device);

struct DeviceOptions {
  // "cpu", "cuda" or "cuda:N".
  std::string device = "cpu";
  // Converted batches that may be held at once (by the trainer, or in flight); Convert blocks
  // for a slot beyond that. Bounds device memory: resident_batches × the float32 batch.
  uint32_t resident_batches = 2;
  // Per channel: out = (x / 255 − mean[c]) / std[c]. Both empty: out = x / 255.
  std::vector<float> mean;
  std::vector<float> std;

  // INVALID_ARGUMENT naming the field: a bad device, resident_batches 0, mean and std of
  // different sizes, a std <= 0.
  absl::Status Validate() const;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_DEVICE_OPTIONS_H_
