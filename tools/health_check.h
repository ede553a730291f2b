#ifndef STOKER_TOOLS_HEALTH_CHECK_H_
#define STOKER_TOOLS_HEALTH_CHECK_H_

// A client of grpc.health.v1.Health/Check, which every Stoker server answers, for
// `stoker-ctl health` (a container health check and Kubernetes exec probe). Debian ships no
// generated health proto, so the request and response are encoded by hand: the request is
// HealthCheckRequest{service} and the response HealthCheckResponse{status = field 1, an enum}.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls/tls_config.h"

namespace stoker {

// grpc.health.v1.HealthCheckResponse.ServingStatus, same numbers.
enum class ServingStatus { kUnknown = 0, kServing = 1, kNotServing = 2, kServiceUnknown = 3 };

// "SERVING", "NOT_SERVING", ... as grpc_health_probe prints them.
const char* ServingStatusName(ServingStatus status);

// The serving status of `service` ("" = the whole server) at `address` (host:port), within
// `timeout`. Errors: the call's own (UNAVAILABLE when nothing answers, DEADLINE_EXCEEDED,
// NOT_FOUND for a service the server does not know) with the address in the message; INTERNAL
// when the reply does not parse. With TLS (`tls`), the server must present a coordinator or
// worker certificate of the CA.
absl::StatusOr<ServingStatus> CheckHealth(const std::string& address, const std::string& service,
                                          absl::Duration timeout, const TlsConfig& tls);

// The response bytes → status (exposed for the unit test). INTERNAL if malformed.
absl::StatusOr<ServingStatus> ParseHealthCheckResponse(const std::string& bytes);
// HealthCheckRequest{service} on the wire (exposed for the unit test).
std::string EncodeHealthCheckRequest(const std::string& service);

}  // namespace stoker

#endif  // STOKER_TOOLS_HEALTH_CHECK_H_
