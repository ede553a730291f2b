#ifndef STOKER_WORKER_WORKER_SERVER_H_
#define STOKER_WORKER_WORKER_SERVER_H_

// A running worker: the gRPC server (stoker.v1.Worker and grpc.health.v1.Health) plus the
// Worker logic registered with the coordinator. What worker/main.cc and TestCluster start.
// Health is SERVING while the worker is registered (NOT_SERVING while it registers again after
// the coordinator dropped it, and from Drain on).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "data/dataset_io.h"
#include "worker/worker_config.h"

namespace stoker {

class Worker;

// Thread-safe.
class WorkerServer {
 public:
  // Binds config.listen_address (UNAVAILABLE naming it when that fails), registers with the
  // coordinator (UNAVAILABLE naming the coordinator when it stays unreachable), starts serving.
  // Jobs' datasets are read through `io` (main.cc builds it from the storage flags).
  // INVALID_ARGUMENT when the config does not validate.
  static absl::StatusOr<std::unique_ptr<WorkerServer>> Start(const WorkerConfig& config,
                                                             DatasetIo io,
                                                             Clock* clock = Clock::Real());
  ~WorkerServer();

  int port() const;
  // host:port clients dial.
  const std::string& address() const;
  Worker* worker();
  // Graceful drain: health NOT_SERVING, then Worker::Drain(config.drain_deadline). Call before
  // Stop; idempotent.
  void Drain();
  // Stops leasing, closes streams (deadline a few seconds), stops producers. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit WorkerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_WORKER_SERVER_H_
