#ifndef STOKER_TESTS_TESTING_TEST_CLUSTER_H_
#define STOKER_TESTS_TESTING_TEST_CLUSTER_H_

// An in-process cluster for integration tests: a coordinator and N workers, each a real gRPC
// server on 127.0.0.1 with a port picked by the kernel, over mutual TLS with certificates made
// for it (tests/testing/test_certs.h) unless a test asks for plaintext (options.insecure).
//
//   absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(/*workers=*/3);
//   LoaderOptions options; options.coordinator_address = cluster->coordinator_address();
//   options.tls = cluster->tls_for(Role::kTrainer); ...

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/coordinator_server.h"
#include "data/dataset_io.h"
#include "tests/testing/test_certs.h"
#include "worker/worker_server.h"

namespace stoker {

struct TestClusterOptions {
  int workers = 3;
  // Producer threads per worker.
  uint32_t threads_per_worker = 1;
  // listen_address is forced to 127.0.0.1:0; tls, when left unset, to the coordinator's
  // certificate (or plaintext with insecure).
  CoordinatorConfig coordinator;
  // Plaintext everywhere: only for a test that asks for it (hybrid mode, plaintext checks).
  bool insecure = false;
  // The certificates to use; made by Start when null (and not insecure).
  std::shared_ptr<const TestCerts> certs;
  // Adjusts the config of the i-th worker started (0-based, AddWorker included), e.g. its
  // simulate_batch_period (worker/simulated_batch.h) or tls (preset to the worker's
  // certificate). May be empty.
  std::function<void(size_t index, WorkerConfig* config)> configure_worker;
  // What the coordinator and every worker read datasets through: one storage and one pool of
  // open shards, shared as a process's are (a test reads the cache's stats or the pool's count
  // from here).
  DatasetIo io = DatasetIo::FromEnvironment();
};

// Not thread-safe: drive it from the test's thread.
class TestCluster {
 public:
  static absl::StatusOr<std::unique_ptr<TestCluster>> Start(const TestClusterOptions& options);
  // Default options with `workers` workers.
  static absl::StatusOr<std::unique_ptr<TestCluster>> Start(int workers);
  ~TestCluster();

  std::string coordinator_address() const { return coordinator_->address(); }
  CoordinatorServer* coordinator() { return coordinator_.get(); }
  size_t num_workers() const { return workers_.size(); }
  WorkerServer* worker(size_t i) { return workers_[i].get(); }
  // The TLS settings of a process of `role` in this cluster (plaintext with insecure).
  TlsConfig tls_for(Role role) const;
  // Null with insecure.
  const TestCerts* certs() const { return options_.certs.get(); }

  // Starts one more worker.
  absl::Status AddWorker();
  // Stops everything; idempotent.
  void Stop();

 private:
  explicit TestCluster(const TestClusterOptions& options) : options_(options) {}

  TestClusterOptions options_;
  std::unique_ptr<CoordinatorServer> coordinator_;
  std::vector<std::unique_ptr<WorkerServer>> workers_;
};

}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_TEST_CLUSTER_H_
