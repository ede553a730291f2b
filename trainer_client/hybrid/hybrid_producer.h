#ifndef STOKER_TRAINER_CLIENT_HYBRID_HYBRID_PRODUCER_H_
#define STOKER_TRAINER_CLIENT_HYBRID_HYBRID_PRODUCER_H_

// Hybrid mode: the trainer host's spare cores as one more producer. A HybridProducer is a real
// worker (worker/worker_server.h) running inside the trainer process, serving on loopback and
// registered with the coordinator as private to one client id: the coordinator lists it to that
// client only, so the Loader with that id streams from it exactly as from a remote worker
// (credit, leases, acks, exactly-once) and no other trainer ever dials it. A job can then run
// with zero remote workers and gains from each one added.
//
//   options.client_id = "rank0-" + ...;                 // any id unique to this process
//   ASSIGN_OR_RETURN(auto local,
//                    HybridProducer::Start(options.coordinator_address, options.client_id,
//                                          /*threads=*/2, tls, DatasetIo::FromEnvironment()));
//   ASSIGN_OR_RETURN(auto loader, Loader::Open(options));
//   ... train ...
//   loader->Stop();   // the Loader first, then the producer (destruction order does this)
//
// Links the worker (augmentation kernels, decoders, data sources): a separate library,
// stoker_hybrid_producer, so that trainers not using hybrid mode link only stoker::client.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls/tls_config.h"
#include "data/dataset_io.h"

namespace stoker {

class WorkerServer;

// Thread-safe.
class HybridProducer {
 public:
  // Starts `threads` producer threads (> 0) serving on 127.0.0.1 and registers them with the
  // coordinator as private to `client_id` (non-empty). `tls`: the producer's own identity, a
  // certificate of role worker (the coordinator takes RegisterWorker only from workers, and the
  // Loader streams only from servers whose certificate is a worker's), or insecure. Datasets are
  // read through `io` (the Python module gives each producer DatasetIo::FromEnvironment()).
  // INVALID_ARGUMENT naming the bad argument (TLS fields as "tls.cert_file" ...); UNAVAILABLE
  // naming the coordinator when it cannot be reached.
  static absl::StatusOr<std::unique_ptr<HybridProducer>> Start(
      const std::string& coordinator_address, const std::string& client_id, uint32_t threads,
      const TlsConfig& tls, DatasetIo io);
  ~HybridProducer();  // Stop()s.
  HybridProducer(const HybridProducer&) = delete;
  HybridProducer& operator=(const HybridProducer&) = delete;

  // host:port it serves on (loopback).
  const std::string& address() const;
  // Stops leasing, closes its streams, joins its threads. Idempotent.
  void Stop();

 private:
  explicit HybridProducer(std::unique_ptr<WorkerServer> server);
  std::unique_ptr<WorkerServer> server_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_HYBRID_HYBRID_PRODUCER_H_
