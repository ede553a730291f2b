#include "trainer_client/consumption_window.h"

namespace stoker {

ConsumptionWindow::ConsumptionWindow(absl::Time start)
    : wait_seconds_(start), step_seconds_(start), steps_(start), batches_(start) {}

void ConsumptionWindow::RecordWait(absl::Time now, absl::Duration wait, bool returned_batch) {
  wait_seconds_.Add(now, absl::ToDoubleSeconds(wait));
  if (returned_batch) batches_.Add(now, 1);
}

void ConsumptionWindow::RecordStep(absl::Time now, absl::Duration step) {
  step_seconds_.Add(now, absl::ToDoubleSeconds(step));
  steps_.Add(now, 1);
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
  stats.set_batches_consumed(batches_delivered);
  return stats;
}

}  // namespace stoker
