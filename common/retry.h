#ifndef STOKER_COMMON_RETRY_H_
#define STOKER_COMMON_RETRY_H_

// Capped exponential backoff with jitter for calls that may fail with UNAVAILABLE, and the one
// check of a BackoffPolicy. A server may ask for a longer wait (HTTP's Retry-After): the failing
// attempt says so with WithRetryAfter, and the next try waits at least that long.

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace stoker {

struct BackoffPolicy {
  absl::Duration initial = absl::Milliseconds(50);
  absl::Duration max = absl::Seconds(2);
  double multiplier = 2.0;
  // Total attempts including the first; >= 1.
  int max_attempts = 5;
  // The longest wait a server's Retry-After is honoured for; a longer one is cut to this, so a
  // throttling server slows a read down without stalling it for minutes.
  absl::Duration max_retry_after = absl::Seconds(20);
};

// OK, or INVALID_ARGUMENT naming `name`'s bad field ("NAME.max_attempts: must be >= 1").
absl::Status ValidateBackoffPolicy(const BackoffPolicy& policy, absl::string_view name);

// Delay before retry number `attempt` (1 = first retry): min(max, initial * multiplier^(attempt-1))
// scaled by a factor drawn uniformly from [0.5, 1.0] (`jitter_unit` in [0, 1)).
absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt, double jitter_unit);

// `status` (UNAVAILABLE) carrying a server's request to wait `delay` before the next try.
absl::Status WithRetryAfter(absl::Status status, absl::Duration delay);

// The wait WithRetryAfter put on `status`, if any.
std::optional<absl::Duration> RetryAfterOf(const absl::Status& status);

// The wait before retry number `attempt` after `failed`: BackoffDelay, or the server's
// Retry-After (at most policy.max_retry_after) when that is longer.
absl::Duration RetryDelay(const BackoffPolicy& policy, int attempt, double jitter_unit,
                          const absl::Status& failed);

// Calls `attempt` until it returns something other than UNAVAILABLE or the attempts are spent,
// sleeping RetryDelay on `clock` between tries. Returns the last status; when every attempt failed
// with UNAVAILABLE, the message says how many attempts were made and keeps the last error's text.
absl::Status RetryUnavailable(const BackoffPolicy& policy, Clock* clock,
                              const std::function<absl::Status()>& attempt);

}  // namespace stoker

#endif  // STOKER_COMMON_RETRY_H_
