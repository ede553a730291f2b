#ifndef STOKER_COORDINATOR_CALL_LATENCIES_H_
#define STOKER_COORDINATOR_CALL_LATENCIES_H_

// How long the coordinator takes to answer its calls, per RPC method: from the moment gRPC hands
// the call to its handler to the moment the handler finishes it. That covers waiting for a
// CallExecutor thread and for the coordinator's mutex, the work, and the journal's group commit
// where the call waits for it; not gRPC's own parsing, serialization and transport. Exported as
// stoker_coordinator_rpc_seconds{method} (docs/metrics.md); `scripts/bench.sh control-plane`
// reads it to separate the coordinator's share of LeaseTasks latency from its callers'.

#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/histogram.h"

namespace stoker {

// Thread-safe.
class CallLatencies {
 public:
  // Bucket upper bounds in seconds: fine below 10 ms, where the control plane's targets are.
  static const std::vector<double>& Bounds();

  void Observe(absl::string_view method, absl::Duration latency);
  // Every method observed so far with its histogram, by method name.
  std::vector<std::pair<std::string, Histogram>> Snapshot() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Histogram> by_method_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_CALL_LATENCIES_H_
