#ifndef STOKER_COMMON_TLS_TLS_CONFIG_H_
#define STOKER_COMMON_TLS_TLS_CONFIG_H_

// How a Stoker process secures its gRPC ports and calls, and who its peers are (docs/security.md).
//
// Every process (coordinator, worker, trainer client, stoker-ctl) holds one TlsConfig: its own
// certificate and key and the CA bundle it trusts, all PEM files, re-read when they change on
// disk (rotation without a restart; common/tls/grpc_tls.h). Connections are mutual TLS: both
// ends present a certificate signed by the CA. Plaintext only when `insecure` is set explicitly.
//
// A peer's role (and tenant) is the SAN URI spiffe://stoker/[tenant/<tenant>/]role/<role> of its
// certificate (common/tls/principal.h; scripts/dev-certs.sh makes such certificates).
//
// No gRPC here: the credentials are built in common/tls/grpc_tls.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace stoker {

class FlagSet;
class MetricFamilyBuilder;

// kScaler is an autoscaler (KEDA's external scaler client): read-only, it may ask the
// coordinator's ExternalScaler service and GetStatus, nothing else.
enum class Role { kCoordinator, kWorker, kTrainer, kOperator, kScaler };

// "coordinator", "worker", "trainer", "operator", "scaler".
absl::string_view RoleName(Role role);

// The role named `name` ("worker"); nullopt when it names none.
std::optional<Role> RoleFromName(absl::string_view name);

// Plain data; thread-compatible. The default is neither TLS nor plaintext: Validate() fails
// until the files or `insecure` are set (no silent plaintext).
struct TlsConfig {
  // PEM certificate (chain) of this process; its SAN URI gives its role. A client that sends a
  // bearer token (bearer_token_file) may go without one.
  std::string cert_file;
  // PEM private key of cert_file.
  std::string key_file;
  // PEM bundle of the CAs whose certificates this process trusts (peers must present one).
  std::string ca_file;
  // Client side: a file with this process's bearer token, one "role:token" line
  // (common/tls/bearer_tokens.h), sent with every call as "authorization: Bearer <token>".
  std::string bearer_token_file;
  // Server side: a file of the bearer tokens this server accepts, "role:token" lines. With it,
  // a client certificate is optional: a caller's role comes from its certificate or its token.
  std::string accept_bearer_tokens_file;
  // Plaintext, no peer identity, every role check passes. Only when asked for explicitly.
  bool insecure = false;
  // How often the files are checked for a new version (rotation).
  absl::Duration reload_interval = absl::Seconds(60);

  // INVALID_ARGUMENT naming the field (tls.cert_file, tls.key_file, tls.ca_file,
  // tls.bearer_token_file, tls.accept_bearer_tokens_file, tls.insecure, tls.reload_interval):
  // nothing set at all names tls.cert_file (give the files, or insecure); with TLS ca_file and
  // either cert_file + key_file or bearer_token_file must be given and readable, token files must
  // parse; `insecure` excludes every file (tokens travel only over TLS); reload_interval >= 1s.
  absl::Status Validate() const;
  // Validate(), and with TLS a server's own certificate and key (tls.cert_file).
  absl::Status ValidateServing() const;

  // A config with insecure set.
  static TlsConfig Plaintext() {
    TlsConfig config;
    config.insecure = true;
    return config;
  }
};

// Calls this process refused for want of identity (UNAUTHENTICATED) or of the right role
// (PERMISSION_DENIED), counted by common/tls/grpc_tls.h's RoleGate. Thread-safe.
struct RpcDenials {
  uint64_t unauthenticated = 0;
  uint64_t permission_denied = 0;
};
RpcDenials RpcDenialCounts();
// Counts one refused call with `code` (UNAUTHENTICATED or PERMISSION_DENIED; others ignored).
void CountRpcDenial(absl::StatusCode code);
// stoker_rpc_denied_total{code} (docs/metrics.md).
void AddRpcDenialMetrics(MetricFamilyBuilder* m);

// Logs a WARNING that says `what` (e.g. "stoker-worker") runs without TLS, when it does.
void WarnIfInsecure(const TlsConfig& config, absl::string_view what);

// The flags every binary has for its TlsConfig: --tls-cert, --tls-key, --tls-ca,
// --bearer-token-file,
// --accept-bearer-tokens-file, --insecure, --tls-reload-interval-s. Maps the config fields to them
// for FlagSet::Fail.
struct TlsFlags {
  TlsConfig config;

  // `calls`: the process calls servers (--bearer-token-file); `serves`: it has a port
  // (--accept-bearer-tokens-file, and Build() demands its certificate).
  void AddTo(FlagSet* flags, bool calls, bool serves);
  // The config, validated (INVALID_ARGUMENT naming the field).
  absl::StatusOr<TlsConfig> Build() const;

 private:
  bool serves_ = false;
};

}  // namespace stoker

#endif  // STOKER_COMMON_TLS_TLS_CONFIG_H_
