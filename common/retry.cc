#include "common/retry.h"

#include <algorithm>
#include <cmath>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"

namespace stoker {

absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt, double jitter_unit) {
  const double growth = std::pow(policy.multiplier, std::max(0, attempt - 1));
  const absl::Duration capped = std::min(policy.max, policy.initial * growth);
  return capped * (0.5 + 0.5 * jitter_unit);
}

absl::Status RetryUnavailable(const BackoffPolicy& policy, Clock* clock,
                              const std::function<absl::Status()>& attempt) {
  absl::BitGen jitter;
  absl::Status status;
  const int attempts = std::max(1, policy.max_attempts);
  for (int i = 1; i <= attempts; ++i) {
    status = attempt();
    if (status.code() != absl::StatusCode::kUnavailable) return status;
    if (i < attempts) clock->SleepFor(BackoffDelay(policy, i, absl::Uniform(jitter, 0.0, 1.0)));
  }
  return absl::UnavailableError(
      absl::StrCat("gave up after ", attempts, " attempts: ", status.message()));
}

}  // namespace stoker
