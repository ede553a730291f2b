#ifndef STOKER_WORKER_COORDINATOR_API_H_
#define STOKER_WORKER_COORDINATOR_API_H_

// The coordinator calls a worker makes, behind an interface so that the worker's logic never
// sees gRPC (the implementation is worker/grpc_coordinator_api.cc).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "stoker/v1/coordinator.pb.h"

namespace stoker {

// Implementations are thread-safe. Errors carry the coordinator's status code; the message
// names the coordinator's address.
class CoordinatorApi {
 public:
  virtual ~CoordinatorApi() = default;
  virtual absl::StatusOr<stoker::v1::RegisterWorkerResponse> RegisterWorker(
      const stoker::v1::RegisterWorkerRequest& request) = 0;
  virtual absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> WorkerHeartbeat(
      const stoker::v1::WorkerHeartbeatRequest& request) = 0;
  virtual absl::StatusOr<stoker::v1::LeaseTasksResponse> LeaseTasks(
      const stoker::v1::LeaseTasksRequest& request) = 0;
  virtual absl::StatusOr<stoker::v1::GetJobResponse> GetJob(
      const stoker::v1::GetJobRequest& request) = 0;
  // Cancels the calls in flight and fails later ones with CANCELLED, so that a stopping worker
  // does not wait out a deadline on a coordinator that is itself shutting down.
  virtual void Shutdown() = 0;
};

// A gRPC client of `address`; every call has deadline `rpc_timeout`.
std::unique_ptr<CoordinatorApi> NewGrpcCoordinatorApi(const std::string& address,
                                                      absl::Duration rpc_timeout);

}  // namespace stoker

#endif  // STOKER_WORKER_COORDINATOR_API_H_
