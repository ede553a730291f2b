#include "common/retry.h"

#include <algorithm>
#include <cmath>

#include "absl/random/random.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

// The status payload that carries a Retry-After, in milliseconds as decimal text.
constexpr absl::string_view kRetryAfterPayload = "type.stoker.dev/stoker.RetryAfterMillis";

}  // namespace

absl::Status ValidateBackoffPolicy(const BackoffPolicy& policy, absl::string_view name) {
  if (policy.max_attempts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".max_attempts: must be >= 1, got ", policy.max_attempts));
  }
  if (policy.initial < absl::ZeroDuration() || policy.max < policy.initial) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": must have 0 <= initial <= max"));
  }
  if (!(policy.multiplier >= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".multiplier: must be >= 1, got ", policy.multiplier));
  }
  if (policy.max_retry_after < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".max_retry_after: must be >= 0"));
  }
  return absl::OkStatus();
}

absl::Status WithRetryAfter(absl::Status status, absl::Duration delay) {
  status.SetPayload(kRetryAfterPayload, absl::Cord(absl::StrCat(absl::ToInt64Milliseconds(delay))));
  return status;
}

std::optional<absl::Duration> RetryAfterOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kRetryAfterPayload);  // An absl::optional here.
  int64_t millis = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &millis) || millis < 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(millis);
}

absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt, double jitter_unit) {
  const double growth = std::pow(policy.multiplier, std::max(0, attempt - 1));
  const absl::Duration capped = std::min(policy.max, policy.initial * growth);
  return capped * (0.5 + 0.5 * jitter_unit);
}

absl::Duration RetryDelay(const BackoffPolicy& policy, int attempt, double jitter_unit,
                          const absl::Status& failed) {
  const absl::Duration backoff = BackoffDelay(policy, attempt, jitter_unit);
  const std::optional<absl::Duration> asked = RetryAfterOf(failed);
  if (!asked) return backoff;
  return std::max(backoff, std::min(*asked, policy.max_retry_after));
}

absl::Status RetryUnavailable(const BackoffPolicy& policy, Clock* clock,
                              const std::function<absl::Status()>& attempt) {
  absl::BitGen jitter;
  absl::Status status;
  const int attempts = std::max(1, policy.max_attempts);
  for (int i = 1; i <= attempts; ++i) {
    status = attempt();
    if (status.code() != absl::StatusCode::kUnavailable) return status;
    if (i < attempts) {
      clock->SleepFor(RetryDelay(policy, i, absl::Uniform(jitter, 0.0, 1.0), status));
    }
  }
  return absl::UnavailableError(
      absl::StrCat("gave up after ", attempts, " attempts: ", status.message()));
}

}  // namespace stoker
