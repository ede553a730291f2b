#ifndef STOKER_TRAINER_CLIENT_CONSUMPTION_WINDOW_H_
#define STOKER_TRAINER_CLIENT_CONSUMPTION_WINDOW_H_

// The training loop's recent rhythm, as the coordinator's advisor needs it: over the last ~10
// seconds, how long the loop waited inside Next() and how long its step took between calls, and
// how many bytes its receive path took in and how busy that kept it, and, where NVML says, how
// busy the GPU it feeds was. Reported in every client
// heartbeat (ClientStats).

#include <cstdint>

#include "absl/time/time.h"
#include "common/sliding_window.h"
#include "stoker/v1/status.pb.h"

namespace stoker {

// Thread-compatible.
class ConsumptionWindow {
 public:
  explicit ConsumptionWindow(absl::Time start);

  // The loop spent `wait` inside a Next() that returned at `now`.
  void RecordWait(absl::Time now, absl::Duration wait, bool returned_batch);
  // The loop spent `step` between returning from Next() and calling it again at `now`.
  void RecordStep(absl::Time now, absl::Duration step);
  // A batch of `wire_bytes` (as received) arrived at `now`; its receive path took `busy`.
  void RecordReceived(absl::Time now, uint64_t wire_bytes, absl::Duration busy);
  // The GPU the client feeds was `utilization` busy (in [0, 1]) when sampled at `now`.
  void RecordGpuUtilization(absl::Time now, double utilization);

  // The recent figures (gpu_utilization: the mean of the recent samples, unset without any);
  // ClientStats.batches_delivered is `batches_delivered` (the loader's total).
  stoker::v1::ClientStats Snapshot(absl::Time now, uint64_t batches_delivered) const;

 private:
  SlidingWindow wait_seconds_;
  SlidingWindow step_seconds_;
  SlidingWindow steps_;
  SlidingWindow batches_;
  SlidingWindow wire_bytes_;
  SlidingWindow receive_busy_seconds_;
  SlidingWindow gpu_utilization_sum_;
  SlidingWindow gpu_samples_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_CONSUMPTION_WINDOW_H_
