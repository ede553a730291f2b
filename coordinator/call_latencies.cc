#include "coordinator/call_latencies.h"

#include <algorithm>

namespace stoker {

const std::vector<double>& CallLatencies::Bounds() {
  static const std::vector<double>* const bounds = new std::vector<double>{
      5e-5, 1e-4,   2e-4, 3e-4,   5e-4, 7.5e-4, 1e-3, 1.5e-3, 2e-3, 3e-3, 4e-3, 5e-3,
      6e-3, 7.5e-3, 1e-2, 1.5e-2, 2e-2, 3e-2,   5e-2, 0.1,    0.3,  1.0,  3.0};
  return *bounds;
}

void CallLatencies::Observe(absl::string_view method, absl::Duration latency) {
  absl::MutexLock lock(&mu_);
  auto it = by_method_.find(method);
  if (it == by_method_.end()) it = by_method_.emplace(method, Histogram(Bounds())).first;
  it->second.Observe(absl::ToDoubleSeconds(latency));
}

std::vector<std::pair<std::string, Histogram>> CallLatencies::Snapshot() const {
  std::vector<std::pair<std::string, Histogram>> out;
  {
    absl::MutexLock lock(&mu_);
    out.assign(by_method_.begin(), by_method_.end());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace stoker
