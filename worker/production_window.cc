#include "worker/production_window.h"

#include <algorithm>
#include <iterator>

namespace stoker {

ProductionWindow::ProductionWindow(absl::Time start, uint32_t threads)
    : start_(start), threads_(threads), busy_seconds_(start) {}

void ProductionWindow::Record(absl::Time now, uint64_t job_id, absl::Duration busy,
                              uint32_t samples) {
  busy_seconds_.Add(now, absl::ToDoubleSeconds(busy));
  samples_by_job_.try_emplace(job_id, start_).first->second.Add(now, samples);
  if (samples_by_job_.size() <= kMaxJobs) return;
  for (auto it = samples_by_job_.begin(); it != samples_by_job_.end();) {
    it = it->second.Sum(now) == 0 ? samples_by_job_.erase(it) : std::next(it);
  }
}

void ProductionWindow::Report(absl::Time now, stoker::v1::WorkerStats* stats) const {
  const double span = absl::ToDoubleSeconds(busy_seconds_.Span(now));
  stats->set_busy_fraction(span > 0 ? std::min(1.0, busy_seconds_.Sum(now) / (span * threads_))
                                    : 0.0);
  stats->clear_job_rates();
  for (const auto& [job_id, samples] : samples_by_job_) {
    if (samples.Sum(now) == 0) continue;
    stoker::v1::JobRate* rate = stats->add_job_rates();
    rate->set_job_id(job_id);
    rate->set_samples_per_second(samples.RatePerSecond(now));
  }
}

}  // namespace stoker
