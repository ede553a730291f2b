#include "trainer_client/hybrid/hybrid_producer.h"

#include <utility>

#include "absl/status/status.h"
#include "worker/worker_config.h"
#include "worker/worker_server.h"

namespace stoker {

absl::StatusOr<std::unique_ptr<HybridProducer>> HybridProducer::Start(
    const std::string& coordinator_address, const std::string& client_id, uint32_t threads,
    const TlsConfig& tls, DatasetIo io) {
  if (client_id.empty()) {
    return absl::InvalidArgumentError("client_id: must be set (the Loader's client id)");
  }
  if (threads == 0) return absl::InvalidArgumentError("threads: must be > 0");
  WorkerConfig config;
  config.coordinator_address = coordinator_address;
  config.listen_address = "127.0.0.1:0";
  config.threads = threads;
  config.hybrid_client_id = client_id;
  config.tls = tls;
  absl::StatusOr<std::unique_ptr<WorkerServer>> server = WorkerServer::Start(config, std::move(io));
  if (!server.ok()) return server.status();
  return std::unique_ptr<HybridProducer>(new HybridProducer(*std::move(server)));
}

HybridProducer::HybridProducer(std::unique_ptr<WorkerServer> server) : server_(std::move(server)) {}

HybridProducer::~HybridProducer() { Stop(); }

const std::string& HybridProducer::address() const { return server_->address(); }

void HybridProducer::Stop() { server_->Stop(); }

}  // namespace stoker
