#ifndef STOKER_COMMON_METRICS_H_
#define STOKER_COMMON_METRICS_H_

// Serving Prometheus metrics (docs/metrics.md lists every one): MetricsServer serves
// collectables (common/metric_family_builder.h) at http://address:port/metrics, and
// MetricsFlags are the flags every binary has for it.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace stoker {

// Serves collectables over HTTP. Thread-safe; stops serving when destroyed.
class MetricsServer {
 public:
  // Listens on address:port (port 0 = any free port). UNAVAILABLE naming the address when it
  // cannot bind; INVALID_ARGUMENT for a port outside 0..65535.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address, int port);
  ~MetricsServer();

  // Serves `collectable` (held weakly: the owner keeps it alive) at /metrics.
  void Register(const std::shared_ptr<prometheus::Collectable>& collectable);
  int port() const { return port_; }

 private:
  MetricsServer(std::unique_ptr<prometheus::Exposer> exposer, int port);
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_;
};

class FlagSet;  // common/flags.h

// The flags every binary has: --metrics-port (0 = off) and --metrics-address (loopback by
// default). Thread-compatible.
struct MetricsFlags {
  uint32_t port = 0;
  std::string address = "127.0.0.1";

  void AddTo(FlagSet* flags);
  // nullptr when port is 0; otherwise a server serving `collectable`. Errors as
  // MetricsServer::Start.
  absl::StatusOr<std::unique_ptr<MetricsServer>> Serve(
      const std::shared_ptr<prometheus::Collectable>& collectable) const;
};

}  // namespace stoker

#endif  // STOKER_COMMON_METRICS_H_
