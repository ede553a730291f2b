#ifndef STOKER_DATA_HTTP_REQUEST_H_
#define STOKER_DATA_HTTP_REQUEST_H_

// One HTTP request through libcurl, the transport under HTTP shards (data/http_file.h), S3
// (data/s3_client.h) and the credential endpoints (data/aws_credentials.h). Behind the
// HttpTransport interface so that the credential chain can be unit-tested with a fake.
//
// Each thread keeps one curl handle, so its connections (keep-alive, TLS sessions) are reused
// across requests and URLs. Signing uses libcurl's own SigV4 (CURLOPT_AWS_SIGV4): the request
// carries the provider string and the key pair, curl computes the signature over the method,
// URL, query and every header given here (so x-amz-content-sha256 and x-amz-security-token are
// signed). The secret is handed only to curl and never appears in a status.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace stoker {

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE.
  std::string url;
  std::vector<std::string> headers;  // "Name: value".
  absl::Span<const uint8_t> body;    // Sent for PUT and POST.
  // SigV4 via curl: "aws:amz:<region>:<service>" and the key pair; empty: not signed.
  std::string aws_sigv4;
  std::string access_key_id;
  std::string secret_access_key;
  // Where the response body goes: `out` (at most out_capacity bytes; more aborts the transfer
  // with a retryable error) or, when out is null, HttpResponse::body.
  uint8_t* out = nullptr;
  size_t out_capacity = 0;
  absl::Duration timeout = absl::Seconds(60);
  absl::Duration connect_timeout = absl::Seconds(10);
  // Follow 3xx redirects (never for signed requests). False: a 3xx comes back as the answer.
  bool follow_redirects = true;
};

struct HttpResponse {
  long status = 0;
  std::string body;    // When HttpRequest::out was null.
  size_t written = 0;  // Body bytes received.
  int64_t content_length = -1;
  std::map<std::string, std::string> headers;  // Names lower-case; last value wins.
};

// Thread-safe.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Any HTTP answer is OK (the caller maps its status). UNAVAILABLE for transport failures
  // worth retrying (refused, reset, timed out, name not resolved); FAILED_PRECONDITION for the
  // others. Messages name the URL without its query.
  virtual absl::StatusOr<HttpResponse> Send(const HttpRequest& request) = 0;
};

// The libcurl transport, shared by the process.
HttpTransport* CurlTransport();

// The URL without "?query", for messages.
std::string UrlForMessages(const std::string& url);

}  // namespace stoker

#endif  // STOKER_DATA_HTTP_REQUEST_H_
