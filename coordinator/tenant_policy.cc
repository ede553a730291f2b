#include "coordinator/tenant_policy.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/text_file.h"
#include "common/tls/principal.h"
#include "google/protobuf/util/json_util.h"
#include "stoker/v1/tenants.pb.h"

namespace stoker {
namespace {

absl::StatusOr<TenantLimits> LimitsOf(const stoker::v1::TenantQuota& quota,
                                      absl::string_view where) {
  TenantLimits limits;
  if (quota.has_weight()) {
    const double weight = quota.weight();
    if (!std::isfinite(weight) || weight <= 0 || weight > kMaxTenantWeight) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".weight: ", weight, " is not in (0, ", kMaxTenantWeight, "]"));
    }
    limits.weight = weight;
  }
  limits.max_jobs = quota.max_jobs();
  limits.max_ranks = quota.max_ranks();
  limits.max_prefetch_bytes_per_worker = quota.max_prefetch_bytes_per_worker();
  limits.max_trace_windows = quota.max_trace_windows();
  limits.max_bearer_tokens = quota.max_bearer_tokens();
  return limits;
}

}  // namespace

absl::StatusOr<TenantPolicy> ParseTenantPolicy(absl::string_view field, absl::string_view json) {
  stoker::v1::TenantPolicyFile file;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a misspelt quota must not silently mean "unlimited"
  const auto parsed =
      google::protobuf::util::JsonStringToMessage(std::string(json), &file, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", parsed.message().ToString()));
  }
  std::map<std::string, TenantLimits> tenants;
  for (const auto& [name, quota] : file.tenants()) {
    const std::string where = absl::StrCat("tenants.", name);
    if (name != kDefaultTenant) {
      RETURN_IF_ERROR(CheckTenantName(absl::StrCat(field, ": ", where), name));
    }
    absl::StatusOr<TenantLimits> limits = LimitsOf(quota, where);
    if (!limits.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": ", limits.status().message()));
    }
    tenants.emplace(name, *limits);
  }
  absl::StatusOr<TenantLimits> defaults = LimitsOf(file.defaults(), "defaults");
  if (!defaults.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", defaults.status().message()));
  }
  return TenantPolicy(std::move(tenants), *defaults);
}

absl::StatusOr<TenantPolicy> ReadTenantPolicy(absl::string_view field, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(field, path, kMaxTenantPolicyBytes));
  return ParseTenantPolicy(field, text);
}

std::optional<QuotaRefusal> OpenJobOverQuota(absl::string_view tenant, const TenantLimits& limits,
                                             uint32_t jobs, uint64_t ranks, uint32_t world_size) {
  if (limits.max_jobs != 0 && jobs >= limits.max_jobs) {
    return QuotaRefusal{
        kQuotaMaxJobs,
        absl::ResourceExhaustedError(absl::StrCat(
            "tenant ", tenant, ": ", jobs, " jobs open, its quota (", kQuotaMaxJobs,
            " in the tenant policy); finished jobs leave after --job-idle-timeout-ms"))};
  }
  if (limits.max_ranks != 0 && ranks + world_size > limits.max_ranks) {
    return QuotaRefusal{kQuotaMaxRanks,
                        absl::ResourceExhaustedError(absl::StrCat(
                            "tenant ", tenant, ": ", ranks, " ranks in open jobs, and ", world_size,
                            " more would be over its quota of ", limits.max_ranks, " (",
                            kQuotaMaxRanks, " in the tenant policy)"))};
  }
  return std::nullopt;
}

std::optional<QuotaRefusal> TraceOverQuota(absl::string_view tenant, const TenantLimits& limits,
                                           uint32_t traced) {
  if (limits.max_trace_windows == 0 || traced < limits.max_trace_windows) return std::nullopt;
  return QuotaRefusal{
      kQuotaMaxTraceWindows,
      absl::ResourceExhaustedError(absl::StrCat(
          "tenant ", tenant, ": ", traced, " jobs traced, its quota (", kQuotaMaxTraceWindows,
          " in the tenant policy); a window closes after its seconds"))};
}

absl::Status CheckBearerTokenQuotas(absl::string_view field, const TenantPolicy& policy,
                                    const std::vector<BearerToken>& tokens) {
  std::map<std::string, uint32_t> per_tenant;
  for (const BearerToken& token : tokens) ++per_tenant[token.principal.tenant];
  for (const auto& [tenant, count] : per_tenant) {
    const uint32_t quota = policy.For(tenant).max_bearer_tokens;
    if (quota != 0 && count > quota) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": tenant ", tenant, ": ", count,
                                                     " bearer tokens, over its quota of ", quota,
                                                     " (max_bearer_tokens in the tenant policy)"));
    }
  }
  return absl::OkStatus();
}

std::optional<TenantPolicy> TenantPolicyFile::Refresh() {
  std::string version = FileVersion(path_);
  if (version.empty() || version == version_) return std::nullopt;
  absl::StatusOr<TenantPolicy> policy = ReadTenantPolicy(field_, path_);
  version_ = std::move(version);  // a broken version is reported once, not every look
  if (!policy.ok()) {
    STOKER_LOG(ERROR) << "keeping the tenant policy in force: " << policy.status();
    return std::nullopt;
  }
  return *std::move(policy);
}

}  // namespace stoker
