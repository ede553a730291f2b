// Coordinator: the tenant policy (weights and quotas, coordinator/tenant_policy.h) and what each
// tenant holds against its quotas. See coordinator.h (SetTenantPolicy, TenantQuotaUses).

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "coordinator/coordinator.h"

namespace stoker {

void Coordinator::SetTenantPolicy(std::shared_ptr<const TenantPolicy> policy) {
  absl::MutexLock lock(&mu_);
  tenant_policy_ = std::move(policy);
}

std::shared_ptr<const TenantPolicy> Coordinator::tenant_policy() const {
  absl::MutexLock lock(&mu_);
  return tenant_policy_;
}

uint32_t Coordinator::TracedJobsLocked(absl::string_view tenant) const {
  uint32_t traced = 0;
  for (const JobRecord* job : state_.Jobs()) {
    if (job->tenant == tenant && trace_.Control(job->id).has_value()) ++traced;
  }
  return traced;
}

absl::Status Coordinator::RefuseByQuotaLocked(const std::string& tenant, QuotaRefusal refusal) {
  ++quota_refusals_[{tenant, refusal.quota}];
  return std::move(refusal.status);
}

std::map<std::string, Coordinator::TenantQuotaUse> Coordinator::TenantQuotaUses() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, TenantQuotaUse> uses;
  for (const auto& [tenant, usage] : state_.tenant_usage()) uses[tenant].usage = usage;
  for (const JobRecord* job : state_.Jobs()) {
    if (trace_.Control(job->id).has_value()) ++uses[job->tenant].traced_jobs;
  }
  for (const auto& [tenant, limits] : tenant_policy_->tenants()) uses[tenant];
  for (const auto& [key, count] : quota_refusals_) uses[key.first].refusals[key.second] = count;
  for (auto& [tenant, use] : uses) use.limits = tenant_policy_->For(tenant);
  return uses;
}

}  // namespace stoker
