#ifndef STOKER_COORDINATOR_COORDINATOR_METRICS_H_
#define STOKER_COORDINATOR_COORDINATOR_METRICS_H_

// The coordinator's Prometheus metrics (docs/metrics.md), read from the Coordinator when scraped:
// workers, tasks by state, leases reassigned, and per job the advisor's figures
// (stoker_job_workers_desired is the number an autoscaler follows), and how long its calls take.

#include <vector>

#include "coordinator/call_latencies.h"
#include "coordinator/coordinator.h"
#include "coordinator/leadership.h"
#include "prometheus/collectable.h"

namespace stoker {

// Thread-safe. REQUIRES: `coordinator`, `latencies` and `leadership` outlive this object.
//
// Replicated coordinators (leadership.h): every replica exports whether it leads and its epoch;
// only the leader exports the rest. A standby's state follows the leader's, and its figures
// beside the leader's would count every job twice in a sum over the pods.
class CoordinatorMetrics : public prometheus::Collectable {
 public:
  CoordinatorMetrics(Coordinator* coordinator, const CallLatencies* latencies,
                     const Leadership* leadership = SoleLeadership())
      : coordinator_(coordinator), latencies_(latencies), leadership_(leadership) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Coordinator* const coordinator_;
  const CallLatencies* const latencies_;
  const Leadership* const leadership_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_METRICS_H_
