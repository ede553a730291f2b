#ifndef STOKER_COMMON_TLS_GRPC_TLS_H_
#define STOKER_COMMON_TLS_GRPC_TLS_H_

// gRPC glue of common/tls/tls_config.h: the one place that builds server and channel
// credentials, and reads a caller's role. Included only by gRPC glue files (servers, clients,
// services), never by logic headers.
//
// With TLS, credentials watch the PEM files (grpc::experimental::FileWatcherCertificateProvider,
// every reload_interval): a replaced certificate, key or CA bundle is used for new connections
// without a restart. Servers require and verify a client certificate signed by the CA (mutual
// TLS). Channels verify the server's chain and that its certificate names `peer_role`; they do
// not check the host name, so workers need no certificate per address (the role is the
// identity; docs/security.md). With a bearer_token_file, channels also send the bearer token with
// every call (call credentials: only over TLS, which gRPC enforces too).

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/tls/principal.h"
#include "common/tls/tls_config.h"

namespace stoker {

class BearerTokenFile;

// REQUIRES: config.Validate() is OK.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TlsConfig& config);

// Credentials of a channel to a server whose certificate must name one of `peer_roles` (with
// TLS). REQUIRES: config.Validate() is OK.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const TlsConfig& config,
                                                             std::vector<Role> peer_roles);

// The principal (role and tenant) of the caller of a server call. UNAUTHENTICATED when the
// connection carries no verified certificate with a role, PERMISSION_DENIED when it names
// several.
absl::StatusOr<Principal> PeerPrincipal(const grpc::AuthContext& auth);

// Decides whether a call may proceed: the caller's principal (nullopt with `insecure`: no
// identity) when its role is one of `allowed`; otherwise PERMISSION_DENIED naming the caller's
// role, `method` and the roles allowed, or UNAUTHENTICATED naming what was missing; each denial is
// counted (CountRpcDenial).
//
// The caller's role comes from its verified certificate or, when the server accepts bearer
// tokens (TlsConfig::accept_bearer_tokens_file), from an "authorization: Bearer <token>" header: an
// unknown token is UNAUTHENTICATED, a token of another role or tenant than the certificate
// presented PERMISSION_DENIED. Thread-safe.
class RoleGate {
 public:
  // REQUIRES: config.Validate() is OK.
  explicit RoleGate(const TlsConfig& config);

  absl::StatusOr<std::optional<Principal>> Check(const grpc::ServerContextBase& context,
                                                 const char* method,
                                                 std::initializer_list<Role> allowed) const;

 private:
  absl::StatusOr<Principal> CallerPrincipal(const grpc::ServerContextBase& context) const;

  const bool insecure_;
  const std::shared_ptr<BearerTokenFile> tokens_;  // Null: no tokens accepted.
};

}  // namespace stoker

#endif  // STOKER_COMMON_TLS_GRPC_TLS_H_
