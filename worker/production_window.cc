#include "worker/production_window.h"

#include <algorithm>
#include <iterator>

namespace stoker {
namespace {

// `seconds` over `threads` threads' (or CPUs') share of `span`, at most 1; 0 for an empty span.
double Fraction(double seconds, double span, uint32_t threads) {
  return span > 0 ? std::min(1.0, seconds / (span * threads)) : 0.0;
}

}  // namespace

ProductionWindow::ProductionWindow(absl::Time start, uint32_t threads, uint32_t process_cpus)
    : start_(start),
      threads_(threads),
      process_cpus_(process_cpus),
      busy_seconds_(start),
      occupied_seconds_(start) {}

void ProductionWindow::Record(absl::Time now, uint64_t job_id, const TaskTime& time,
                              uint32_t samples) {
  busy_seconds_.Add(now, absl::ToDoubleSeconds(time.cpu));
  occupied_seconds_.Add(now, absl::ToDoubleSeconds(std::max(time.wall, time.cpu)));
  samples_by_job_.try_emplace(job_id, start_).first->second.Add(now, samples);
  if (samples_by_job_.size() <= kMaxJobs) return;
  for (auto it = samples_by_job_.begin(); it != samples_by_job_.end();) {
    it = it->second.Sum(now) == 0 ? samples_by_job_.erase(it) : std::next(it);
  }
}

void ProductionWindow::RecordProcessCpu(absl::Time now, absl::Duration process_cpu) {
  if (process_cpus_ == 0) return;
  if (!process_cpu_seconds_.has_value()) {
    process_cpu_seconds_.emplace(now);  // the first reading only sets where counting starts
  } else if (process_cpu > last_process_cpu_) {
    process_cpu_seconds_->Add(now, absl::ToDoubleSeconds(process_cpu - last_process_cpu_));
  }
  last_process_cpu_ = std::max(last_process_cpu_, process_cpu);
}

void ProductionWindow::Report(absl::Time now, stoker::v1::WorkerStats* stats) const {
  const double span = absl::ToDoubleSeconds(busy_seconds_.Span(now));
  stats->set_busy_fraction(Fraction(busy_seconds_.Sum(now), span, threads_));
  stats->set_occupied_fraction(Fraction(occupied_seconds_.Sum(now), span, threads_));
  if (process_cpu_seconds_.has_value()) {
    stats->set_process_cpu_fraction(Fraction(process_cpu_seconds_->Sum(now),
                                             absl::ToDoubleSeconds(process_cpu_seconds_->Span(now)),
                                             process_cpus_));
  }
  stats->clear_job_rates();
  for (const auto& [job_id, samples] : samples_by_job_) {
    if (samples.Sum(now) == 0) continue;
    stoker::v1::JobRate* rate = stats->add_job_rates();
    rate->set_job_id(job_id);
    rate->set_samples_per_second(samples.RatePerSecond(now));
  }
}

}  // namespace stoker
