#ifndef STOKER_WORKER_PRODUCTION_WINDOW_H_
#define STOKER_WORKER_PRODUCTION_WINDOW_H_

// A worker's recent production, as the coordinator's advisor needs it: over the last ~10
// seconds, the fraction of its producer threads' time spent producing (CPU time, so that time
// spent waiting for a core on a contended host does not count as capacity used), and samples
// per second per job. Reported in every worker heartbeat (WorkerStats).

#include <cstdint>
#include <map>

#include "absl/time/time.h"
#include "common/sliding_window.h"
#include "stoker/v1/coordinator.pb.h"

namespace stoker {

// Thread-compatible.
class ProductionWindow {
 public:
  // REQUIRES: threads > 0.
  ProductionWindow(absl::Time start, uint32_t threads);

  // One batch of `samples` samples of `job_id` finished at `now` after `busy` CPU time of one
  // thread.
  void Record(absl::Time now, uint64_t job_id, absl::Duration busy, uint32_t samples);
  // Sets stats' busy_fraction and job_rates (jobs with something in the window).
  void Report(absl::Time now, stoker::v1::WorkerStats* stats) const;

 private:
  // Jobs kept before idle ones are forgotten.
  static constexpr size_t kMaxJobs = 16;

  const absl::Time start_;
  const uint32_t threads_;
  SlidingWindow busy_seconds_;
  std::map<uint64_t, SlidingWindow> samples_by_job_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_PRODUCTION_WINDOW_H_
