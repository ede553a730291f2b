#ifndef STOKER_DATA_HTTP_FILE_H_
#define STOKER_DATA_HTTP_FILE_H_

// Shards over HTTP(S): a RandomAccessFile whose size comes from a HEAD request and whose reads are
// range requests ("Range: bytes=a-b", answered 206) made with libcurl. Each thread keeps one curl
// handle, so its connections (keep-alive, TLS sessions) are reused across reads and URLs.
// Answers map to statuses by data/http_status.h: 408, 429, 5xx and transport failures (refused,
// reset, timed out) are retried with capped exponential backoff, a bounded number of times, each
// retry waiting at least what the server's Retry-After asked.
//
// Error codes, each message naming the URL: NOT_FOUND (404/410), PERMISSION_DENIED (401/403, or
// a redirect not followed), OUT_OF_RANGE (a read past the end, or 416), UNAVAILABLE (retries
// spent), FAILED_PRECONDITION (any other answer, e.g. a server that ignores ranges).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/retry.h"
#include "data/storage.h"

namespace stoker {

struct HttpOptions {
  // Retries of 5xx and transport errors.
  BackoffPolicy backoff{absl::Milliseconds(100), absl::Seconds(2), 2.0, 4};
  // Limit for one request, connection included.
  absl::Duration request_timeout = absl::Seconds(60);
  absl::Duration connect_timeout = absl::Seconds(10);
  // False where --data-root limits the URLs a process may read (a redirect could lead out of
  // them): a 3xx answer is then PERMISSION_DENIED instead of being followed.
  bool follow_redirects = true;
};

// Sends HEAD to learn the size. Errors as above.
absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenHttpFile(const std::string& url,
                                                               const HttpOptions& options);

}  // namespace stoker

#endif  // STOKER_DATA_HTTP_FILE_H_
