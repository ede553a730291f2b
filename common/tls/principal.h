#ifndef STOKER_COMMON_TLS_PRINCIPAL_H_
#define STOKER_COMMON_TLS_PRINCIPAL_H_

// Who a caller is: its role and its tenant (docs/security.md, "Tenants").
//
// A certificate names both in one SAN URI: spiffe://stoker/tenant/<tenant>/role/<role>, or
// spiffe://stoker/role/<role> for the default tenant (the certificates made before tenants
// existed keep working, all in one tenant). A bearer token line names them as
// "role@tenant:token" or "role:token" (common/tls/bearer_tokens.h).
//
// A job belongs to the tenant of the trainer that opened it. TenantScope is what a server asks
// of a caller before it shows or touches a job: a trainer sees its own tenant's jobs only, the
// other roles (operator, scaler, worker, coordinator) every tenant's, and so does a caller of a
// plaintext server (no identity to check; tls.insecure).
//
// No gRPC here: common/tls/grpc_tls.h reads a caller's principal from its call.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/tls/tls_config.h"

namespace stoker {

// The tenant of role-only certificates and tokens, and of every job opened without identity.
inline constexpr absl::string_view kDefaultTenant = "default";
// A tenant name is a DNS label: 1 to kMaxTenantNameBytes of [a-z0-9-], starting and ending with
// a letter or digit (so it fits a Kubernetes name, a metric label and a file name).
inline constexpr size_t kMaxTenantNameBytes = 63;

// OK when `name` is a tenant name; INVALID_ARGUMENT naming `field` and what is wrong otherwise.
absl::Status CheckTenantName(absl::string_view field, absl::string_view name);

struct Principal {
  Role role = Role::kTrainer;
  std::string tenant = std::string(kDefaultTenant);

  bool operator==(const Principal& other) const {
    return role == other.role && tenant == other.tenant;
  }
};

// "trainer@a" ("trainer" in the default tenant), for messages and logs.
std::string PrincipalName(const Principal& principal);

// The SAN URI that names `principal`: spiffe://stoker/role/<role> in the default tenant,
// spiffe://stoker/tenant/<tenant>/role/<role> otherwise.
std::string PrincipalUri(const Principal& principal);

// The principal named by SAN URI `uri`; nullopt when `uri` is not a Stoker URI (a tenant that is
// not a tenant name or a role that is not a role included).
std::optional<Principal> PrincipalFromUri(absl::string_view uri);

// The principal named by `uris` (a certificate's SAN URIs): exactly one Stoker URI must name
// one. UNAUTHENTICATED when none does, PERMISSION_DENIED when several name different ones.
absl::StatusOr<Principal> PrincipalFromUris(const std::vector<std::string>& uris);

// Which tenants' jobs a caller may see and touch. The default, with no caller, sees all (a
// server without identity, in-process callers); OpenJob's jobs go to `tenant`.
struct TenantScope {
  std::string tenant = std::string(kDefaultTenant);
  bool all_tenants = true;

  // `principal` nullopt: a plaintext caller (sees all, owns what it opens in the default tenant).
  static TenantScope Of(const std::optional<Principal>& principal);
  // Only `tenant`'s jobs.
  static TenantScope Only(absl::string_view tenant);

  bool Sees(absl::string_view job_tenant) const { return all_tenants || job_tenant == tenant; }
};

}  // namespace stoker

#endif  // STOKER_COMMON_TLS_PRINCIPAL_H_
