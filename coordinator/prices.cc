#include "coordinator/prices.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/pool_name.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

absl::Status ValidatePrice(absl::string_view field, double dollars_per_hour) {
  if (std::isfinite(dollars_per_hour) && dollars_per_hour >= 0 &&
      dollars_per_hour <= kMaxDollarsPerHour) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": must be in [0, ", kMaxDollarsPerHour,
                                                 "] dollars per hour, got ", dollars_per_hour));
}

}  // namespace

double Prices::WorkerDollarsPerHour(const std::string& pool) const {
  const auto it = worker_pool_dollars_per_hour.find(pool);
  return it == worker_pool_dollars_per_hour.end() ? worker_dollars_per_hour : it->second;
}

bool Prices::priced() const {
  if (gpu_node_dollars_per_hour > 0 || worker_dollars_per_hour > 0) return true;
  for (const auto& [pool, price] : worker_pool_dollars_per_hour) {
    if (price > 0) return true;
  }
  return false;
}

absl::Status Prices::Validate() const {
  RETURN_IF_ERROR(ValidatePrice("prices.gpu_node_dollars_per_hour", gpu_node_dollars_per_hour));
  RETURN_IF_ERROR(ValidatePrice("prices.worker_dollars_per_hour", worker_dollars_per_hour));
  if (worker_pool_dollars_per_hour.size() > kMaxPricedPools) {
    return absl::InvalidArgumentError(
        absl::StrCat("prices.worker_pool_dollars_per_hour: ", worker_pool_dollars_per_hour.size(),
                     " pools, over the limit of ", kMaxPricedPools));
  }
  for (const auto& [pool, price] : worker_pool_dollars_per_hour) {
    RETURN_IF_ERROR(ValidatePoolName("prices.worker_pool_dollars_per_hour", pool));
    RETURN_IF_ERROR(ValidatePrice("prices.worker_pool_dollars_per_hour", price));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> ParsePoolPrices(absl::string_view field,
                                                              absl::string_view text) {
  std::map<std::string, double> prices;
  if (text.empty()) return prices;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> parts = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    double price = 0;
    if (parts.size() != 2 || parts[0].empty() || !absl::SimpleAtod(parts[1], &price)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": expected pool=dollars_per_hour[,pool=...], got '", entry, "'"));
    }
    if (!prices.emplace(std::string(parts[0]), price).second) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": pool '", parts[0], "' twice"));
    }
  }
  return prices;
}

}  // namespace stoker
