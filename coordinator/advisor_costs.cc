#include "coordinator/advisor_costs.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "coordinator/advisor.h"

namespace stoker {
namespace {

constexpr double kSecondsPerHour = 3600;

// The epoch and dollar figures of `point`, whose workers, samples/s and wait are set.
CostPoint WithCosts(const CostModel& model, CostPoint point) {
  point.dollars_per_hour = model.gpu_nodes * model.gpu_node_dollars_per_hour +
                           point.workers * model.worker_dollars_per_hour;
  if (point.samples_per_second > 0 && model.samples_per_epoch > 0) {
    point.epoch_seconds = static_cast<double>(model.samples_per_epoch) / point.samples_per_second;
    point.dollars_per_epoch = point.dollars_per_hour * point.epoch_seconds / kSecondsPerHour;
    point.gpu_hours_lost_per_epoch =
        model.gpu_nodes * point.epoch_seconds * point.data_wait_fraction / kSecondsPerHour;
  }
  if (point.dollars_per_hour > 0) {
    point.samples_per_dollar = point.samples_per_second * kSecondsPerHour / point.dollars_per_hour;
  }
  return point;
}

uint32_t Knee(const CostModel& model) {
  const double needed = std::min(model.demand_samples_per_second / model.capacity_per_worker,
                                 static_cast<double>(kMaxWorkersDesired));
  return std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(needed - 1e-9)));
}

}  // namespace

CostPoint PredictAt(const CostModel& model, uint32_t workers) {
  CostPoint point;
  point.workers = workers;
  point.samples_per_second =
      std::min(model.demand_samples_per_second, workers * model.capacity_per_worker);
  point.data_wait_fraction =
      model.demand_samples_per_second > 0
          ? std::max(0.0, 1 - point.samples_per_second / model.demand_samples_per_second)
          : 0;
  return WithCosts(model, point);
}

CostAdvice PredictCosts(const CostModel& model) {
  CostAdvice advice;
  CostPoint now;
  now.workers = model.workers_now;
  now.samples_per_second = model.supply_now;
  now.data_wait_fraction = model.data_wait_now;
  advice.now = WithCosts(model, now);

  advice.knee_workers = Knee(model);
  advice.cheapest_workers = advice.knee_workers;
  if (model.priced && advice.knee_workers > 1) {
    // Strictly cheaper below the knee, or the knee (see the header).
    const uint32_t below = advice.knee_workers - 1;
    if (PredictAt(model, below).dollars_per_epoch <
        PredictAt(model, advice.knee_workers).dollars_per_epoch) {
      advice.cheapest_workers = below;
    }
  }
  std::set<uint32_t> counts = {advice.knee_workers, advice.cheapest_workers,
                               std::max<uint32_t>(model.workers_desired, 1)};
  if (model.workers_now > 0) counts.insert(model.workers_now);
  const uint32_t listed = std::min(
      std::max({model.workers_now, model.workers_desired, advice.knee_workers}) + 2, kMaxCostRows);
  for (uint32_t n = 1; n <= listed; ++n) counts.insert(n);
  for (const uint32_t n : counts) advice.by_workers.push_back(PredictAt(model, n));
  return advice;
}

}  // namespace stoker
