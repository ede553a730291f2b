#include "worker/tenant_fair_queue.h"

#include <algorithm>

namespace stoker {

void TenantFairQueue::Add(absl::string_view tenant, uint64_t job_id, double weight) {
  auto [tenant_it, new_tenant] = tenants_.try_emplace(tenant);
  TenantFlow& flow = tenant_it->second;
  flow.weight = weight;
  // A tenant whose queue was empty starts at no less than now: idle time banks no credit.
  if (flow.queued == 0) flow.virtual_seconds = std::max(flow.virtual_seconds, virtual_now_);
  ++flow.queued;
  auto [job_it, new_job] = jobs_.try_emplace(job_id);
  JobFlow& job = job_it->second;
  if (new_job) {
    job.tenant = &*tenant_it;
    job.estimate_seconds = last_cost_seconds_;
  }
  if (job.queued == 0) job.virtual_seconds = std::max(job.virtual_seconds, flow.job_clock);
  ++job.queued;
}

std::optional<TenantFairQueue::Turn> TenantFairQueue::Next() {
  TenantEntry* tenant = nullptr;
  for (auto& entry : tenants_) {
    if (entry.second.queued > 0 &&
        (tenant == nullptr || entry.second.virtual_seconds < tenant->second.virtual_seconds)) {
      tenant = &entry;
    }
  }
  if (tenant == nullptr) return std::nullopt;
  uint64_t job_id = 0;
  JobFlow* job = nullptr;
  for (auto& [id, flow] : jobs_) {
    if (flow.tenant == tenant && flow.queued > 0 &&
        (job == nullptr || flow.virtual_seconds < job->virtual_seconds)) {
      job_id = id;
      job = &flow;
    }
  }
  TenantFlow& flow = tenant->second;
  virtual_now_ = std::max(virtual_now_, flow.virtual_seconds);
  flow.job_clock = std::max(flow.job_clock, job->virtual_seconds);
  const double charge = job->estimate_seconds;
  flow.virtual_seconds += charge / flow.weight;
  job->virtual_seconds += charge;
  --flow.queued;
  ++flow.running;
  --job->queued;
  ++job->running;
  return Turn{job_id, charge};
}

void TenantFairQueue::Done(const Turn& turn, absl::Duration cost) {
  auto it = jobs_.find(turn.job_id);
  if (it == jobs_.end()) return;  // cleared meanwhile
  JobFlow& job = it->second;
  TenantFlow& flow = job.tenant->second;
  const double seconds = absl::ToDoubleSeconds(cost);
  flow.virtual_seconds += (seconds - turn.charged_seconds) / flow.weight;
  job.virtual_seconds += seconds - turn.charged_seconds;
  job.estimate_seconds = seconds;
  last_cost_seconds_ = seconds;
  --flow.running;
  --job.running;
  ForgetIdle(turn.job_id);
}

void TenantFairQueue::ForgetIdle(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it->second.queued > 0 || it->second.running > 0) return;
  TenantEntry* tenant = it->second.tenant;
  jobs_.erase(it);
  if (tenant->second.queued == 0 && tenant->second.running == 0) {
    tenants_.erase(tenants_.find(tenant->first));
  }
}

void TenantFairQueue::Clear() {
  jobs_.clear();
  tenants_.clear();
}

size_t TenantFairQueue::queued_of_job(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? 0 : it->second.queued;
}

double TenantFairQueue::virtual_seconds(absl::string_view tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.virtual_seconds;
}

}  // namespace stoker
