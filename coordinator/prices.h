#ifndef STOKER_COORDINATOR_PRICES_H_
#define STOKER_COORDINATOR_PRICES_H_

// What the cluster's machines cost, for the advisor's dollars (coordinator/advisor_costs.h):
// a GPU node per trainer rank, and a worker by its pool (worker --pool), so that pools of
// different instance types are priced each at its own per-worker rate. Dollars per hour; 0
// means not priced (the advisor then reports no dollars).
//
// Plain data; thread-compatible.

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker {

// Most pools one price list names.
inline constexpr size_t kMaxPricedPools = 64;
// The highest price accepted, dollars per hour (a typo guard, and keeps every sum finite).
inline constexpr double kMaxDollarsPerHour = 1e6;

struct Prices {
  // One GPU node, which runs one trainer rank (--gpu-node-dollars-per-hour).
  double gpu_node_dollars_per_hour = 0;
  // One worker of a pool without a price of its own (--worker-dollars-per-hour).
  double worker_dollars_per_hour = 0;
  // One worker of the named pool (--worker-pool-dollars-per-hour=cpu-a=0.816,cpu-b=0.5).
  std::map<std::string, double> worker_pool_dollars_per_hour;

  // What one worker of `pool` costs per hour.
  double WorkerDollarsPerHour(const std::string& pool) const;
  // Whether any price is set.
  bool priced() const;
  // INVALID_ARGUMENT naming the field (prices.gpu_node_dollars_per_hour, ...) for a price that
  // is negative, not finite or over kMaxDollarsPerHour, a bad pool name, too many pools.
  absl::Status Validate() const;
};

// "cpu-a=0.816,cpu-b=0.5" (empty: none) as pool prices; INVALID_ARGUMENT naming `field` for an
// entry that is not pool=number or a pool named twice. Validate() checks the rest.
absl::StatusOr<std::map<std::string, double>> ParsePoolPrices(absl::string_view field,
                                                              absl::string_view text);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_PRICES_H_
