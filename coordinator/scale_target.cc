#include "coordinator/scale_target.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace stoker {

uint32_t WorkersWanted(const stoker::v1::GetStatusResponse& status, const ScaleScope& scope) {
  uint64_t total = 0;
  uint64_t floor = 0;
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    if (job.state() == stoker::v1::JOB_STATE_FINISHED) continue;
    if (!scope.job.empty() && job.name() != scope.job) continue;
    if (!scope.tenant.empty() && job.tenant() != scope.tenant) continue;
    if (job.advice().measured()) {
      total += job.advice().workers_desired();
    } else {
      floor = std::max<uint64_t>(floor, std::max<uint32_t>(job.advice().workers_now(), 1));
    }
  }
  total = std::max(total, floor);
  uint64_t others = 0;
  if (!scope.pool.empty()) {
    for (const stoker::v1::WorkerStatus& worker : status.workers()) {
      if (worker.info().pool() != scope.pool) ++others;
    }
  }
  const uint64_t wanted = total > others ? total - others : 0;
  return static_cast<uint32_t>(std::min<uint64_t>(wanted, UINT32_MAX));
}

absl::Status ScaleDeciderConfig::Validate() const {
  if (hysteresis_workers < 1) {
    return absl::InvalidArgumentError("hysteresis_workers: must be >= 1");
  }
  if (cooldown < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cooldown: must be >= 0, got ", absl::FormatDuration(cooldown)));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> ScaleDecider::Decide(const ScaleScope& scope, uint32_t wanted) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto it = held_.find(scope);
  if (it == held_.end()) {
    if (held_.size() >= kMaxScaleScopes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("scaler scopes: over the limit of ", kMaxScaleScopes,
                       " (pool, job, tenant) scopes; use fewer ScaledObjects"));
    }
    held_.emplace(scope, Held{wanted, now, false});
    return wanted;
  }
  Held& held = it->second;
  const bool cooled = now - held.changed >= config_.cooldown;
  const bool rise = wanted > held.count && (!held.fell || cooled);
  const bool fall = wanted < held.count && cooled &&
                    (wanted == 0 || held.count - wanted >= config_.hysteresis_workers);
  if (rise || fall) held = Held{wanted, now, fall};
  return held.count;
}

}  // namespace stoker
