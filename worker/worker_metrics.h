#ifndef STOKER_WORKER_WORKER_METRICS_H_
#define STOKER_WORKER_WORKER_METRICS_H_

// The worker's Prometheus metrics (docs/metrics.md), read from the Worker when scraped.

#include <vector>

#include "prometheus/collectable.h"
#include "worker/worker.h"

namespace stoker {

// Thread-safe. REQUIRES: `worker` outlives this object.
class WorkerMetrics : public prometheus::Collectable {
 public:
  explicit WorkerMetrics(Worker* worker) : worker_(worker) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Worker* const worker_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_WORKER_METRICS_H_
