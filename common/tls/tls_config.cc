#include "common/tls/tls_config.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/logging.h"
#include "common/metric_family_builder.h"
#include "common/status_macros.h"
#include "common/tls/bearer_tokens.h"

namespace stoker {
namespace {

constexpr Role kRoles[] = {Role::kCoordinator, Role::kWorker, Role::kTrainer, Role::kOperator,
                           Role::kScaler};

std::atomic<uint64_t> unauthenticated_calls{0};
std::atomic<uint64_t> permission_denied_calls{0};

absl::Status CheckReadable(absl::string_view field, const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": required with TLS (or set tls.insecure for plaintext)"));
  }
  if (access(path.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": cannot read ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kCoordinator:
      return "coordinator";
    case Role::kWorker:
      return "worker";
    case Role::kTrainer:
      return "trainer";
    case Role::kOperator:
      return "operator";
    case Role::kScaler:
      return "scaler";
  }
  return "unknown";
}

std::optional<Role> RoleFromName(absl::string_view name) {
  for (Role role : kRoles) {
    if (name == RoleName(role)) return role;
  }
  return std::nullopt;
}

absl::Status TlsConfig::Validate() const {
  if (reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("tls.reload_interval: must be >= 1s");
  }
  if (insecure) {
    if (!cert_file.empty() || !key_file.empty() || !ca_file.empty()) {
      return absl::InvalidArgumentError(
          "tls.insecure: plaintext was asked for together with TLS files; choose one");
    }
    if (!bearer_token_file.empty() || !accept_bearer_tokens_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          bearer_token_file.empty() ? "tls.accept_bearer_tokens_file" : "tls.bearer_token_file",
          ": bearer tokens travel only over TLS (a plaintext token is as good as published); "
          "drop insecure and give tls.ca_file"));
    }
    return absl::OkStatus();
  }
  if (cert_file.empty() && key_file.empty() && ca_file.empty() && bearer_token_file.empty() &&
      accept_bearer_tokens_file.empty()) {
    return absl::InvalidArgumentError(
        "tls.cert_file: no TLS settings: give tls.cert_file, tls.key_file and tls.ca_file (or "
        "tls.bearer_token_file and tls.ca_file), or set tls.insecure for plaintext explicitly");
  }
  if (bearer_token_file.empty() || !cert_file.empty() || !key_file.empty()) {
    RETURN_IF_ERROR(CheckReadable("tls.cert_file", cert_file));
    RETURN_IF_ERROR(CheckReadable("tls.key_file", key_file));
  }
  RETURN_IF_ERROR(CheckReadable("tls.ca_file", ca_file));
  if (!bearer_token_file.empty()) {
    ASSIGN_OR_RETURN(std::vector<BearerToken> own,
                     ReadBearerTokens("tls.bearer_token_file", bearer_token_file));
    if (own.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("tls.bearer_token_file: holds ", own.size(),
                                                     " tokens; a client's file holds exactly one"));
    }
  }
  if (!accept_bearer_tokens_file.empty()) {
    RETURN_IF_ERROR(
        ReadBearerTokens("tls.accept_bearer_tokens_file", accept_bearer_tokens_file).status());
  }
  return absl::OkStatus();
}

absl::Status TlsConfig::ValidateServing() const {
  RETURN_IF_ERROR(Validate());
  if (!insecure && cert_file.empty()) {
    return absl::InvalidArgumentError(
        "tls.cert_file: a server presents its own certificate (and tls.key_file), tokens or not");
  }
  return absl::OkStatus();
}

RpcDenials RpcDenialCounts() {
  RpcDenials counts;
  counts.unauthenticated = unauthenticated_calls.load(std::memory_order_relaxed);
  counts.permission_denied = permission_denied_calls.load(std::memory_order_relaxed);
  return counts;
}

void CountRpcDenial(absl::StatusCode code) {
  if (code == absl::StatusCode::kUnauthenticated) {
    unauthenticated_calls.fetch_add(1, std::memory_order_relaxed);
  } else if (code == absl::StatusCode::kPermissionDenied) {
    permission_denied_calls.fetch_add(1, std::memory_order_relaxed);
  }
}

void AddRpcDenialMetrics(MetricFamilyBuilder* m) {
  const RpcDenials counts = RpcDenialCounts();
  const std::string help =
      "Calls refused: no verified identity (unauthenticated) or the wrong role "
      "(permission_denied).";
  m->Counter("stoker_rpc_denied_total", help, static_cast<double>(counts.unauthenticated),
             {{"code", "unauthenticated"}});
  m->Counter("stoker_rpc_denied_total", help, static_cast<double>(counts.permission_denied),
             {{"code", "permission_denied"}});
}

void WarnIfInsecure(const TlsConfig& config, absl::string_view what) {
  if (!config.insecure) return;
  STOKER_LOG(WARNING) << what
                      << " runs WITHOUT TLS (--insecure): traffic is plaintext, peers are not "
                         "authenticated and every role check passes. Use only on a trusted "
                         "network or for tests.";
}

void TlsFlags::AddTo(FlagSet* flags, bool calls, bool serves) {
  serves_ = serves;
  flags->Add("tls-cert", &config.cert_file,
             "PEM certificate of this process (its SAN URI spiffe://stoker/role/<role> is its "
             "role); re-read when the file changes");
  flags->Add("tls-key", &config.key_file, "PEM private key of --tls-cert");
  flags->Add("tls-ca", &config.ca_file, "PEM bundle of the CAs whose peers are trusted");
  flags->MapField("tls.cert_file", "tls-cert");
  flags->MapField("tls.key_file", "tls-key");
  flags->MapField("tls.ca_file", "tls-ca");
  if (calls) {
    flags->Add("bearer-token-file", &config.bearer_token_file,
               "File with this process's bearer token, one role:token line, sent with every "
               "call (over TLS; instead of or beside --tls-cert/--tls-key)");
    flags->MapField("tls.bearer_token_file", "bearer-token-file");
  }
  if (serves) {
    flags->Add("accept-bearer-tokens-file", &config.accept_bearer_tokens_file,
               "File of the bearer tokens this server accepts, role:token lines (a caller's role "
               "comes from its certificate or its token; re-read when the file changes)");
    flags->MapField("tls.accept_bearer_tokens_file", "accept-bearer-tokens-file");
  }
  flags->Add("insecure", &config.insecure,
             "Plaintext gRPC without authentication (instead of the --tls-* files)");
  flags->Add("tls-reload-interval-s", &config.reload_interval, absl::Seconds(1),
             "How often the TLS and token files are checked for a new version");
  flags->MapField("tls.insecure", "insecure");
  flags->MapField("tls.reload_interval", "tls-reload-interval-s");
}

absl::StatusOr<TlsConfig> TlsFlags::Build() const {
  TlsConfig built = config;
  RETURN_IF_ERROR(serves_ ? built.ValidateServing() : built.Validate());
  return built;
}

}  // namespace stoker
