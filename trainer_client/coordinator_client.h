#ifndef STOKER_TRAINER_CLIENT_COORDINATOR_CLIENT_H_
#define STOKER_TRAINER_CLIENT_COORDINATOR_CLIENT_H_

// The two unary coordinator calls the trainer client makes, behind an interface so that the
// Loader can be driven by a fake in tests. The gRPC implementation lives in
// grpc_coordinator_client.cc (the only file here that includes grpcpp for it).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "stoker/v1/coordinator.pb.h"

namespace stoker {

// Implementations must be thread-safe.
class CoordinatorClient {
 public:
  virtual ~CoordinatorClient() = default;

  // Errors keep the server's code; the message starts with "coordinator <address>: ".
  // UNAVAILABLE: not reachable (retry); INVALID_ARGUMENT names the bad spec field;
  // ALREADY_EXISTS: the name is taken by another spec.
  virtual absl::StatusOr<v1::OpenJobResponse> OpenJob(const v1::OpenJobRequest& request) = 0;
  // NOT_FOUND: unknown job id.
  virtual absl::StatusOr<v1::ClientHeartbeatResponse> ClientHeartbeat(
      const v1::ClientHeartbeatRequest& request) = 0;
};

// A client over an insecure gRPC channel to `address`; every call has deadline `rpc_timeout`.
std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& address,
                                                            absl::Duration rpc_timeout);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_COORDINATOR_CLIENT_H_
