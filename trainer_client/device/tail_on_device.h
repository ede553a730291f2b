#ifndef STOKER_TRAINER_CLIENT_DEVICE_TAIL_ON_DEVICE_H_
#define STOKER_TRAINER_CLIENT_DEVICE_TAIL_ON_DEVICE_H_

// A client-placed tail (JobSpec.tail, coordinator/tail_placement.h) run by the DeviceFeeder
// instead of the client's CPU: a tail of to_float followed by normalize ops, ending in float32
// CHW, is one per-channel affine map of the uint8 input, which the feeder applies while it copies
// the batch to the GPU. Folding the normalize ops gives that map as the feeder's mean and std:
//   to_float:            y = x / 255
//   normalize(m1, s1):   y = (x / 255 − m1) / s1
//   normalize(m2, s2):   y = (x / 255 − (m1 + m2·s1)) / (s1·s2)
// The result matches ClientTail's within kTailOnDeviceTolerance (the same arithmetic in another
// order; docs/decisions/0043-tail-on-the-device.md); tested on the host feeder here and on CUDA
// where a GPU is present.

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"
#include "trainer_client/loader_env.h"

namespace stoker {

// Largest difference from ClientTail's float32 output, relative to max(1, |output|): the host
// feeder and the CUDA kernel (fused multiply-add) compute x·scale + shift where the tail computes
// (x / 255 − mean) / std; measured ≤ 1e-6 on the host (tail_on_device_test) and checked on CUDA
// (cuda_feeder_test, label gpu).
inline constexpr float kTailOnDeviceTolerance = 2e-5f;

struct DeviceNormalization {
  std::vector<float> mean;  // empty with std: plain x / 255
  std::vector<float> std;
};

// The feeder's mean and std equivalent to `tail` on `channels`-channel images. INVALID_ARGUMENT
// naming the field when the tail is not to_float then normalize ops only, a normalize has
// another channel count (or a std <= 0), or the output is not float32 CHW (the feeder's output;
// such tails stay on the client's CPU).
absl::StatusOr<DeviceNormalization> FoldTailForDevice(const v1::PipelineSpec& tail, int channels);

// A LoaderEnv::tail for a Loader whose batches a DeviceFeeder converts: the tail the coordinator
// places on this client is folded into `*folded` (for the caller's feeder) and the Loader hands
// the workers' uint8 HWC batches through unchanged. The factory runs inside Loader::Open: read
// `*folded` after it returns; it stays unset when the job placed no tail here. A tail that does
// not fold fails Loader::Open with FoldTailForDevice's INVALID_ARGUMENT.
BatchTailFactory DeviceTailFactory(std::shared_ptr<std::optional<DeviceNormalization>> folded);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_TAIL_ON_DEVICE_H_
