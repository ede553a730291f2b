#ifndef STOKER_TESTS_TESTING_RPC_PROBE_H_
#define STOKER_TESTS_TESTING_RPC_PROBE_H_

// Calls every RPC of Stoker's servers with an empty request and reports the status code: what
// the role tables of tls_test and token_auth_test are made of. gRPC glue for tests only.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "common/tls/tls_config.h"

namespace stoker {

// The methods of stoker.v1.Coordinator.
const std::vector<std::string>& CoordinatorMethods();

// Calls Coordinator.`method` (one of CoordinatorMethods) at `address` over `credentials` with an
// empty request; its status code.
grpc::StatusCode CallCoordinator(const std::string& address,
                                 const std::shared_ptr<grpc::ChannelCredentials>& credentials,
                                 const std::string& method);

// Opens Worker.StreamBatches at `address`, sends Open for an unknown job and half-closes; the
// stream's status code.
grpc::StatusCode CallStreamBatches(const std::string& address,
                                   const std::shared_ptr<grpc::ChannelCredentials>& credentials);

// The code an empty request to Coordinator.`method` gets from a caller of `role` that the
// server authenticated: PERMISSION_DENIED for a role the method does not allow
// (docs/security.md), else what the logic answers an empty request (INVALID_ARGUMENT,
// FAILED_PRECONDITION for the id 0, OK for GetStatus).
grpc::StatusCode ExpectedCoordinatorCode(const std::string& method, Role role);

}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_RPC_PROBE_H_
