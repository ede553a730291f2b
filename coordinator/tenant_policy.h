#ifndef STOKER_COORDINATOR_TENANT_POLICY_H_
#define STOKER_COORDINATOR_TENANT_POLICY_H_

// What each tenant (common/tls/principal.h) may use of a shared cluster: its weight in the
// workers' fair share and its quotas. The coordinator holds the current policy
// (Coordinator::SetTenantPolicy) and applies it to the jobs, streams and traces of each tenant;
// it comes from the file of --tenant-policy (proto/stoker/v1/tenants.proto, JSON), re-read when
// it changes (TenantPolicyFile).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/tls/bearer_tokens.h"

namespace stoker {

// 0 in a quota: unlimited.
struct TenantLimits {
  // The tenant's share of every worker's time against the other tenants with work there
  // (weighted fair queueing over tenants, then over a tenant's jobs). > 0.
  double weight = 1.0;
  // Jobs open at once.
  uint32_t max_jobs = 0;
  // Ranks of its open jobs together (the sum of their world sizes).
  uint64_t max_ranks = 0;
  // Bytes its streams may hold on one worker (leased, in production or queued to send).
  uint64_t max_prefetch_bytes_per_worker = 0;
  // Jobs traced at once.
  uint32_t max_trace_windows = 0;
  // Bearer tokens of the tenant a server accepts (--accept-bearer-tokens-file).
  uint32_t max_bearer_tokens = 0;
};

class TenantPolicy {
 public:
  // Every tenant at TenantLimits{}: weight 1, no quota.
  TenantPolicy() = default;
  // `tenants` by name; `defaults` for any tenant not listed.
  TenantPolicy(std::map<std::string, TenantLimits> tenants, TenantLimits defaults)
      : tenants_(std::move(tenants)), defaults_(defaults) {}

  // The limits of `tenant`: its own entry, else the defaults.
  const TenantLimits& For(absl::string_view tenant) const {
    auto it = tenants_.find(std::string(tenant));
    return it == tenants_.end() ? defaults_ : it->second;
  }
  const std::map<std::string, TenantLimits>& tenants() const { return tenants_; }
  const TenantLimits& defaults() const { return defaults_; }

 private:
  std::map<std::string, TenantLimits> tenants_;
  TenantLimits defaults_;
};

// The largest weight a tenant may have (so that weight ratios stay meaningful in doubles).
inline constexpr double kMaxTenantWeight = 1000;
// Most bytes a policy file may have.
inline constexpr size_t kMaxTenantPolicyBytes = 1 << 20;

// The policy of a tenant policy file's JSON text. INVALID_ARGUMENT naming `field`: text that
// does not parse as a TenantPolicyFile (protobuf's message names the unknown or mistyped key), a
// tenant name that is not "default" nor a tenant name ("FIELD: tenants.Team_A: ..."), a weight
// outside (0, kMaxTenantWeight] ("FIELD: tenants.a.weight: ...", "FIELD: defaults.weight: ...").
absl::StatusOr<TenantPolicy> ParseTenantPolicy(absl::string_view field, absl::string_view json);

// ParseTenantPolicy of the file at `path`; INVALID_ARGUMENT naming `field` when it cannot be
// read or is over kMaxTenantPolicyBytes.
absl::StatusOr<TenantPolicy> ReadTenantPolicy(absl::string_view field, const std::string& path);

// The quotas the coordinator enforces, named as in the policy file (and the metrics' `quota`
// label). docs/decisions/0072-tenant-quotas.md.
inline constexpr char kQuotaMaxJobs[] = "max_jobs";
inline constexpr char kQuotaMaxRanks[] = "max_ranks";
inline constexpr char kQuotaMaxTraceWindows[] = "max_trace_windows";

// A request a quota refused: the quota (a kQuota* name) and the RESOURCE_EXHAUSTED status naming
// it and the tenant.
struct QuotaRefusal {
  const char* quota;
  absl::Status status;
};

// Whether `tenant`, whose open jobs are `jobs` holding `ranks` ranks, may open one more of
// `world_size` ranks: nullopt, or the refusal of max_jobs (checked first) or max_ranks.
std::optional<QuotaRefusal> OpenJobOverQuota(absl::string_view tenant, const TenantLimits& limits,
                                             uint32_t jobs, uint64_t ranks, uint32_t world_size);
// Whether `tenant`, `traced` of whose jobs are traced now, may trace one more: nullopt, or the
// refusal of max_trace_windows.
std::optional<QuotaRefusal> TraceOverQuota(absl::string_view tenant, const TenantLimits& limits,
                                           uint32_t traced);
// OK unless `tokens` (a server's --accept-bearer-tokens-file) hold more tokens of a tenant than
// its max_bearer_tokens: INVALID_ARGUMENT naming `field`, the tenant and the quota.
absl::Status CheckBearerTokenQuotas(absl::string_view field, const TenantPolicy& policy,
                                    const std::vector<BearerToken>& tokens);

// A policy file kept current. Thread-compatible: one thread (the coordinator server's liveness
// thread) calls Refresh.
class TenantPolicyFile {
 public:
  // `loaded`: ReadTenantPolicy(field, path) at startup (a file that does not load stops the
  // coordinator from starting).
  TenantPolicyFile(std::string field, std::string path)
      : field_(std::move(field)), path_(std::move(path)) {}

  // Reads the file when its modification time, size or inode changed since the last read: its
  // policy, or nullopt when it did not change. A version that does not read or parse is logged
  // and nullopt returned: the policy in force stays (as with bearer tokens).
  std::optional<TenantPolicy> Refresh();
  const std::string& path() const { return path_; }

 private:
  const std::string field_;
  const std::string path_;
  std::string version_;  // FileVersion of what was last read; empty: never read.
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_TENANT_POLICY_H_
