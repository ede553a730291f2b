#include "common/tls/principal.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace stoker {
namespace {

constexpr absl::string_view kUriPrefix = "spiffe://stoker/";
constexpr absl::string_view kTenantPart = "tenant/";
constexpr absl::string_view kRolePart = "role/";

bool IsLabelChar(char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-'; }

}  // namespace

absl::Status CheckTenantName(absl::string_view field, absl::string_view name) {
  if (name.empty() || name.size() > kMaxTenantNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": a tenant name has 1 to ", kMaxTenantNameBytes, " characters"));
  }
  for (char c : name) {
    if (!IsLabelChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": a tenant name has only lower-case letters, digits and '-'"));
    }
  }
  if (name.front() == '-' || name.back() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": a tenant name starts and ends with a letter or digit"));
  }
  return absl::OkStatus();
}

std::string PrincipalName(const Principal& principal) {
  if (principal.tenant == kDefaultTenant) return std::string(RoleName(principal.role));
  return absl::StrCat(RoleName(principal.role), "@", principal.tenant);
}

std::string PrincipalUri(const Principal& principal) {
  if (principal.tenant == kDefaultTenant) {
    return absl::StrCat(kUriPrefix, kRolePart, RoleName(principal.role));
  }
  return absl::StrCat(kUriPrefix, kTenantPart, principal.tenant, "/", kRolePart,
                      RoleName(principal.role));
}

std::optional<Principal> PrincipalFromUri(absl::string_view uri) {
  if (!absl::ConsumePrefix(&uri, kUriPrefix)) return std::nullopt;
  Principal principal;
  if (absl::ConsumePrefix(&uri, kTenantPart)) {
    const size_t slash = uri.find('/');
    if (slash == absl::string_view::npos) return std::nullopt;
    const absl::string_view tenant = uri.substr(0, slash);
    // "default" is spelled without a tenant part: one URI per principal.
    if (!CheckTenantName("tenant", tenant).ok() || tenant == kDefaultTenant) return std::nullopt;
    principal.tenant = std::string(tenant);
    uri.remove_prefix(slash + 1);
  }
  if (!absl::ConsumePrefix(&uri, kRolePart)) return std::nullopt;
  std::optional<Role> role = RoleFromName(uri);
  if (!role.has_value()) return std::nullopt;
  principal.role = *role;
  return principal;
}

absl::StatusOr<Principal> PrincipalFromUris(const std::vector<std::string>& uris) {
  std::optional<Principal> found;
  for (const std::string& uri : uris) {
    std::optional<Principal> principal = PrincipalFromUri(uri);
    if (!principal.has_value()) continue;
    if (found.has_value() && !(*found == *principal)) {
      return absl::PermissionDeniedError(
          absl::StrCat("peer certificate names more than one principal (", PrincipalName(*found),
                       ", ", PrincipalName(*principal), ")"));
    }
    found = std::move(principal);
  }
  if (!found.has_value()) {
    return absl::UnauthenticatedError(absl::StrCat("peer certificate has no role (a SAN URI ",
                                                   kUriPrefix, kRolePart, "<role> or ", kUriPrefix,
                                                   kTenantPart, "<tenant>/", kRolePart, "<role>)"));
  }
  return *std::move(found);
}

TenantScope TenantScope::Of(const std::optional<Principal>& principal) {
  if (!principal.has_value()) return TenantScope();
  TenantScope scope;
  scope.tenant = principal->tenant;
  scope.all_tenants = principal->role != Role::kTrainer;
  return scope;
}

TenantScope TenantScope::Only(absl::string_view tenant) {
  TenantScope scope;
  scope.tenant = std::string(tenant);
  scope.all_tenants = false;
  return scope;
}

}  // namespace stoker
