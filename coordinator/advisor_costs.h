#ifndef STOKER_COORDINATOR_ADVISOR_COSTS_H_
#define STOKER_COORDINATOR_ADVISOR_COSTS_H_

// What a job delivers and costs, now and at each candidate worker count, from the advisor's
// rate model (coordinator/advisor.h): the trainers would consume `demand` samples/s if they
// never waited, and each worker supplies at most `capacity_per_worker`. With n workers:
//
//   samples/s(n)       = min(demand, n × capacity_per_worker)
//   data wait(n)       = 1 − samples/s(n) / demand          (a trainer waits for what is missing)
//   dollars/hour(n)    = gpu_nodes × gpu price + n × worker price
//   epoch seconds(n)   = samples_per_epoch / samples/s(n)
//   dollars/epoch(n)   = dollars/hour(n) × epoch seconds(n) / 3600
//   GPU-hours lost(n)  = gpu_nodes × epoch seconds(n) × data wait(n) / 3600   (per epoch)
//   samples/dollar(n)  = samples/s(n) × 3600 / dollars/hour(n)
//
// The knee is the fewest workers with no predicted wait, ceil(demand / capacity_per_worker).
// Dollars per epoch fall with n below the knee (the GPUs finish sooner) and rise above it (the
// extra workers idle), so the cheapest count is the knee or the count just below it: below it
// when workers are dear next to the GPUs, the knee when the GPUs are. "Now" uses what is
// measured instead of the model: the samples/s the workers deliver, the ranks' mean wait.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <vector>

namespace stoker {

// Most candidate counts listed beyond the key ones (now, knee, cheapest, desired).
inline constexpr uint32_t kMaxCostRows = 32;

struct CostModel {
  double demand_samples_per_second = 0;  // > 0
  double capacity_per_worker = 0;        // > 0
  uint64_t samples_per_epoch = 0;        // over every rank; 0: epoch figures are 0
  uint32_t gpu_nodes = 0;                // one per trainer rank
  double gpu_node_dollars_per_hour = 0;
  double worker_dollars_per_hour = 0;  // mean over the job's workers' pools
  bool priced = false;                 // any price set
  uint32_t workers_now = 0;
  uint32_t workers_desired = 0;  // the advisor's count (with headroom)
  double supply_now = 0;         // samples/s delivered now
  double data_wait_now = 0;      // mean over ranks, [0, 1]
};

// What the job delivers and costs at one worker count. Epoch figures are 0 when nothing is
// delivered (or samples_per_epoch is 0); dollar figures are 0 when nothing is priced.
struct CostPoint {
  uint32_t workers = 0;
  double samples_per_second = 0;
  double data_wait_fraction = 0;
  double dollars_per_hour = 0;
  double epoch_seconds = 0;
  double dollars_per_epoch = 0;
  double gpu_hours_lost_per_epoch = 0;
  double samples_per_dollar = 0;
};

struct CostAdvice {
  CostPoint now;
  // Predictions for counts 1..min(max(now, desired, knee) + 2, kMaxCostRows) and for now,
  // knee, cheapest and desired wherever they are; ascending, each count once.
  std::vector<CostPoint> by_workers;
  uint32_t knee_workers = 0;
  // Fewest dollars per epoch (ties and an unpriced cluster: the knee).
  uint32_t cheapest_workers = 0;
};

// REQUIRES: model.capacity_per_worker > 0; every figure finite and >= 0.
CostAdvice PredictCosts(const CostModel& model);

// The figures at `workers` predicted by the model.
CostPoint PredictAt(const CostModel& model, uint32_t workers);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ADVISOR_COSTS_H_
