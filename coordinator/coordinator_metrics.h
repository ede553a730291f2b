#ifndef STOKER_COORDINATOR_COORDINATOR_METRICS_H_
#define STOKER_COORDINATOR_COORDINATOR_METRICS_H_

// The coordinator's Prometheus metrics (docs/metrics.md), read from the Coordinator when scraped:
// workers, tasks by state, leases reassigned, and per job the advisor's figures
// (stoker_job_workers_desired is the number an autoscaler follows), and how long its calls take.

#include <vector>

#include "coordinator/call_latencies.h"
#include "coordinator/coordinator.h"
#include "prometheus/collectable.h"

namespace stoker {

// Thread-safe. REQUIRES: `coordinator` and `latencies` outlive this object.
class CoordinatorMetrics : public prometheus::Collectable {
 public:
  CoordinatorMetrics(Coordinator* coordinator, const CallLatencies* latencies)
      : coordinator_(coordinator), latencies_(latencies) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Coordinator* const coordinator_;
  const CallLatencies* const latencies_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_METRICS_H_
