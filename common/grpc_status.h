#ifndef STOKER_COMMON_GRPC_STATUS_H_
#define STOKER_COMMON_GRPC_STATUS_H_

// Conversions between absl::Status and grpc::Status. For gRPC glue files only: logic headers
// never include grpcpp.

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace stoker {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// `context` (e.g. "coordinator 127.0.0.1:5000") prefixes the message so that a user sees which
// peer failed.
inline absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& context) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      context + ": " + status.error_message());
}

}  // namespace stoker

#endif  // STOKER_COMMON_GRPC_STATUS_H_
