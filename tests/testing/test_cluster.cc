#include "tests/testing/test_cluster.h"

#include "common/status_macros.h"

namespace stoker {

namespace {

bool IsUnset(const TlsConfig& tls) {
  return !tls.insecure && tls.cert_file.empty() && tls.key_file.empty() && tls.ca_file.empty() &&
         tls.bearer_token_file.empty() && tls.accept_bearer_tokens_file.empty();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestCluster>> TestCluster::Start(const TestClusterOptions& options) {
  std::unique_ptr<TestCluster> cluster(new TestCluster(options));
  if (!options.insecure && options.certs == nullptr) {
    ASSIGN_OR_RETURN(cluster->options_.certs, TestCerts::Make());
  }
  CoordinatorConfig config = options.coordinator;
  config.listen_address = "127.0.0.1:0";
  if (IsUnset(config.tls)) config.tls = cluster->tls_for(Role::kCoordinator);
  ASSIGN_OR_RETURN(cluster->coordinator_, CoordinatorServer::Start(config, options.io));
  for (int i = 0; i < options.workers; ++i) RETURN_IF_ERROR(cluster->AddWorker());
  return cluster;
}

absl::StatusOr<std::unique_ptr<TestCluster>> TestCluster::Start(int workers) {
  TestClusterOptions options;
  options.workers = workers;
  return Start(options);
}

TestCluster::~TestCluster() { Stop(); }

TlsConfig TestCluster::tls_for(Role role) const {
  return options_.insecure ? TlsConfig::Plaintext() : options_.certs->For(role);
}

absl::Status TestCluster::AddWorker() {
  WorkerConfig config;
  config.coordinator_address = coordinator_->address();
  config.listen_address = "127.0.0.1:0";
  config.threads = options_.threads_per_worker;
  config.max_lease_poll = absl::Milliseconds(50);
  config.tls = tls_for(Role::kWorker);
  if (options_.configure_worker) options_.configure_worker(workers_.size(), &config);
  ASSIGN_OR_RETURN(std::unique_ptr<WorkerServer> worker, WorkerServer::Start(config, options_.io));
  workers_.push_back(std::move(worker));
  return absl::OkStatus();
}

void TestCluster::Stop() {
  for (auto& worker : workers_) worker->Stop();
  if (coordinator_ != nullptr) coordinator_->Stop();
}

}  // namespace stoker
