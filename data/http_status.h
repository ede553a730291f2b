#ifndef STOKER_DATA_HTTP_STATUS_H_
#define STOKER_DATA_HTTP_STATUS_H_

// The one mapping from an HTTP answer to a status, for every HTTP client in Stoker: range reads
// of HTTP shards (data/http_file.h), S3 (data/s3_client.h) and the credential endpoints
// (data/aws_credentials.h). A service's own error codes in the body (S3's ExpiredToken, STS's
// InvalidIdentityToken) are read by that client first; everything else maps here, by meaning:
//
//   2xx                 OK
//   404, 410            NOT_FOUND
//   401, 403            PERMISSION_DENIED
//   416                 OUT_OF_RANGE
//   408, 429, 5xx       UNAVAILABLE: the server timed out, is throttling or failing; retried
//                       (common/retry.h), waiting at least what its Retry-After asked
//   3xx                 PERMISSION_DENIED: a redirect reaches here only where it is not followed
//                       (signed requests, data roots that limit URLs)
//   any other           FAILED_PRECONDITION: the same request would fail again
//
// Thread-compatible free functions.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "data/http_request.h"

namespace stoker {

// UNAVAILABLE with `message`, carrying the answer's Retry-After (WithRetryAfter; an HTTP-date is
// read against `clock`) when it has one: for an answer the server says is worth retrying.
absl::Status RetryableHttpStatus(const HttpResponse& response, absl::string_view message,
                                 Clock* clock);

// The code for HTTP status `http` by the table above.
absl::StatusCode HttpStatusCode(long http);

// OK for a 2xx answer; otherwise a status with HttpStatusCode and `message`, by
// RetryableHttpStatus when the code is UNAVAILABLE.
absl::Status HttpAnswerStatus(const HttpResponse& response, absl::string_view message,
                              Clock* clock);

// A Retry-After header's wait: delta-seconds, or an HTTP-date taken against `now` (a date in
// the past waits 0). nullopt when the value is neither.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now);

}  // namespace stoker

#endif  // STOKER_DATA_HTTP_STATUS_H_
