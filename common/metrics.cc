#include "common/metrics.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "prometheus/exposer.h"

namespace stoker {

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                                    int port) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("metrics port ", port, " is not in 0..65535"));
  }
  const std::string bind = absl::StrCat(address, ":", port);
  try {
    // One serving thread: scrapes are rare and cheap.
    auto exposer = std::make_unique<prometheus::Exposer>(bind, /*num_threads=*/1);
    const std::vector<int> ports = exposer->GetListeningPorts();
    if (ports.empty())
      return absl::UnavailableError(absl::StrCat("metrics: not listening on ", bind));
    return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(exposer), ports.front()));
  } catch (const std::exception& e) {  // civetweb reports a failed bind by throwing.
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", bind, ": ", e.what()));
  }
}

MetricsServer::MetricsServer(std::unique_ptr<prometheus::Exposer> exposer, int port)
    : exposer_(std::move(exposer)), port_(port) {}

MetricsServer::~MetricsServer() = default;

void MetricsServer::Register(const std::shared_ptr<prometheus::Collectable>& collectable) {
  exposer_->RegisterCollectable(collectable);
}

void MetricsFlags::AddTo(FlagSet* flags) {
  flags->Add("metrics-port", &port, "serve Prometheus metrics at /metrics on this port (0 = off)");
  flags->Add("metrics-address", &address, "address the metrics port listens on");
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsFlags::Serve(
    const std::shared_ptr<prometheus::Collectable>& collectable) const {
  if (port == 0) return std::unique_ptr<MetricsServer>();
  ASSIGN_OR_RETURN(std::unique_ptr<MetricsServer> server,
                   MetricsServer::Start(address, static_cast<int>(port)));
  server->Register(collectable);
  return server;
}

}  // namespace stoker
