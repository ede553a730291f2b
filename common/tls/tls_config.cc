#include "common/tls/tls_config.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/logging.h"
#include "common/metric_family_builder.h"

namespace stoker {
namespace {

constexpr absl::string_view kRoleUriPrefix = "spiffe://stoker/role/";
constexpr Role kRoles[] = {Role::kCoordinator, Role::kWorker, Role::kTrainer, Role::kOperator};

std::atomic<uint64_t> unauthenticated_calls{0};
std::atomic<uint64_t> permission_denied_calls{0};

absl::Status CheckReadable(absl::string_view field, const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": required with TLS (or set insecure for plaintext)"));
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
  }
  return "unknown";
}

std::string RoleUri(Role role) { return absl::StrCat(kRoleUriPrefix, RoleName(role)); }

std::optional<Role> RoleFromUri(absl::string_view uri) {
  for (Role role : kRoles) {
    if (uri == RoleUri(role)) return role;
  }
  return std::nullopt;
}

absl::StatusOr<Role> RoleFromUris(const std::vector<std::string>& uris) {
  std::optional<Role> found;
  for (const std::string& uri : uris) {
    std::optional<Role> role = RoleFromUri(uri);
    if (!role.has_value()) continue;
    if (found.has_value() && *found != *role) {
      return absl::PermissionDeniedError(absl::StrCat("peer certificate names more than one role (",
                                                      RoleName(*found), ", ", RoleName(*role),
                                                      ")"));
    }
    found = role;
  }
  if (!found.has_value()) {
    return absl::UnauthenticatedError(
        absl::StrCat("peer certificate has no role (a SAN URI ", kRoleUriPrefix, "<role>)"));
  }
  return *found;
}

absl::Status TlsConfig::Validate() const {
  if (reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("reload_interval: must be >= 1s");
  }
  if (insecure) {
    if (!cert_file.empty() || !key_file.empty() || !ca_file.empty()) {
      return absl::InvalidArgumentError(
          "insecure: plaintext was asked for together with TLS files; choose one");
    }
    return absl::OkStatus();
  }
  if (absl::Status status = CheckReadable("cert_file", cert_file); !status.ok()) return status;
  if (absl::Status status = CheckReadable("key_file", key_file); !status.ok()) return status;
  return CheckReadable("ca_file", ca_file);
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

void TlsFlags::AddTo(FlagSet* flags) {
  flags->Add("tls-cert", &config.cert_file,
             "PEM certificate of this process (its SAN URI spiffe://stoker/role/<role> is its "
             "role); re-read when the file changes");
  flags->Add("tls-key", &config.key_file, "PEM private key of --tls-cert");
  flags->Add("tls-ca", &config.ca_file, "PEM bundle of the CAs whose peers are trusted");
  flags->Add("insecure", &config.insecure,
             "Plaintext gRPC without authentication (instead of the --tls-* files)");
  flags->Add("tls-reload-interval-s", &reload_interval_s,
             "How often the TLS files are checked for a new version");
  flags->MapField("cert_file", "tls-cert");
  flags->MapField("key_file", "tls-key");
  flags->MapField("ca_file", "tls-ca");
  flags->MapField("insecure", "insecure");
  flags->MapField("reload_interval", "tls-reload-interval-s");
}

absl::StatusOr<TlsConfig> TlsFlags::Build() const {
  TlsConfig built = config;
  built.reload_interval = absl::Seconds(reload_interval_s);
  if (absl::Status status = built.Validate(); !status.ok()) return status;
  return built;
}

}  // namespace stoker
