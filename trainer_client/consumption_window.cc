#include "trainer_client/consumption_window.h"

#include <algorithm>

namespace stoker {

ConsumptionWindow::ConsumptionWindow(absl::Time start)
    : wait_seconds_(start),
      step_seconds_(start),
      steps_(start),
      batches_(start),
      wire_bytes_(start),
      receive_busy_seconds_(start),
      gpu_utilization_sum_(start),
      gpu_samples_(start) {}

void ConsumptionWindow::RecordWait(absl::Time now, absl::Duration wait, bool returned_batch) {
  wait_seconds_.Add(now, absl::ToDoubleSeconds(wait));
  if (returned_batch) batches_.Add(now, 1);
}

void ConsumptionWindow::RecordStep(absl::Time now, absl::Duration step) {
  step_seconds_.Add(now, absl::ToDoubleSeconds(step));
  steps_.Add(now, 1);
}

void ConsumptionWindow::RecordReceived(absl::Time now, uint64_t wire_bytes, absl::Duration busy) {
  wire_bytes_.Add(now, static_cast<double>(wire_bytes));
  receive_busy_seconds_.Add(now, absl::ToDoubleSeconds(busy));
}

void ConsumptionWindow::RecordGpuUtilization(absl::Time now, double utilization) {
  gpu_utilization_sum_.Add(now, utilization);
  gpu_samples_.Add(now, 1);
}

stoker::v1::ClientStats ConsumptionWindow::Snapshot(absl::Time now,
                                                    uint64_t batches_delivered) const {
  stoker::v1::ClientStats stats;
  const double wait = wait_seconds_.Sum(now);
  const double step = step_seconds_.Sum(now);
  const double steps = steps_.Sum(now);
  if (wait + step > 0) stats.set_data_wait_fraction(wait / (wait + step));
  if (steps > 0) stats.set_step_seconds(step / steps);
  stats.set_batches_per_second(batches_.RatePerSecond(now));
  stats.set_batches_delivered(batches_delivered);
  stats.set_received_wire_bytes_per_second(wire_bytes_.RatePerSecond(now));
  // Streams receive in parallel: their busy seconds may sum past the wall time.
  stats.set_receive_busy_fraction(std::min(1.0, receive_busy_seconds_.RatePerSecond(now)));
  const double gpu_samples = gpu_samples_.Sum(now);
  if (gpu_samples > 0) stats.set_gpu_utilization(gpu_utilization_sum_.Sum(now) / gpu_samples);
  return stats;
}

}  // namespace stoker
