#ifndef STOKER_COMMON_RETRY_H_
#define STOKER_COMMON_RETRY_H_

// Capped exponential backoff with jitter for calls that may fail with UNAVAILABLE.

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace stoker {

struct BackoffPolicy {
  absl::Duration initial = absl::Milliseconds(50);
  absl::Duration max = absl::Seconds(2);
  double multiplier = 2.0;
  // Total attempts including the first; >= 1.
  int max_attempts = 5;
};

// Delay before retry number `attempt` (1 = first retry): min(max, initial * multiplier^(attempt-1))
// scaled by a factor drawn uniformly from [0.5, 1.0] (`jitter_unit` in [0, 1)).
absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt, double jitter_unit);

// Calls `attempt` until it returns something other than UNAVAILABLE or the attempts are spent,
// sleeping on `clock` between tries. Returns the last status; when every attempt failed with
// UNAVAILABLE, the message says how many attempts were made and keeps the last error's text.
absl::Status RetryUnavailable(const BackoffPolicy& policy, Clock* clock,
                              const std::function<absl::Status()>& attempt);

}  // namespace stoker

#endif  // STOKER_COMMON_RETRY_H_
