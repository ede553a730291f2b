#include "data/http_status.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/retry.h"

namespace stoker {

absl::StatusCode HttpStatusCode(long http) {
  if (http >= 200 && http < 300) return absl::StatusCode::kOk;
  if (http == 404 || http == 410) return absl::StatusCode::kNotFound;
  if (http == 401 || http == 403) return absl::StatusCode::kPermissionDenied;
  if (http == 416) return absl::StatusCode::kOutOfRange;
  if (http == 408 || http == 429 || (http >= 500 && http < 600)) {
    return absl::StatusCode::kUnavailable;
  }
  if (http >= 300 && http < 400) return absl::StatusCode::kPermissionDenied;
  return absl::StatusCode::kFailedPrecondition;
}

absl::Status HttpAnswerStatus(const HttpResponse& response, absl::string_view message,
                              Clock* clock) {
  const absl::StatusCode code = HttpStatusCode(response.status);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  if (code == absl::StatusCode::kUnavailable) return RetryableHttpStatus(response, message, clock);
  return absl::Status(code, message);
}

absl::Status RetryableHttpStatus(const HttpResponse& response, absl::string_view message,
                                 Clock* clock) {
  absl::Status status = absl::UnavailableError(message);
  const auto header = response.headers.find("retry-after");
  if (header == response.headers.end()) return status;
  const std::optional<absl::Duration> wait = ParseRetryAfter(header->second, clock->Now());
  return wait ? WithRetryAfter(std::move(status), *wait) : status;
}

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now) {
  value = absl::StripAsciiWhitespace(value);
  int64_t seconds = 0;
  if (absl::SimpleAtoi(value, &seconds)) {
    if (seconds < 0) return std::nullopt;
    return absl::Seconds(seconds);
  }
  // IMF-fixdate, the form RFC 9110 requires senders to use: "Sun, 06 Nov 1994 08:49:37 GMT".
  absl::Time when;
  std::string error;
  if (!absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(value), absl::UTCTimeZone(), &when,
                       &error)) {
    return std::nullopt;
  }
  return std::max(absl::ZeroDuration(), when - now);
}

}  // namespace stoker
