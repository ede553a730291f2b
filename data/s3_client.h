#ifndef STOKER_DATA_S3_CLIENT_H_
#define STOKER_DATA_S3_CLIENT_H_

// An S3 client on libcurl's SigV4 signing (CURLOPT_AWS_SIGV4): HEAD, ranged GET, PUT, multipart
// upload, ListObjectsV2 (every page), each signed with the credential chain's current keys.
// curl 7.88 does not add x-amz-content-sha256 itself; every request sets it (the SHA-256 of an
// upload's body, the empty body's hash otherwise) and curl signs it with the other headers.
//
// Errors, each naming s3://bucket/key (never a secret). S3's own error codes first:
//   FAILED_PRECONDITION  RequestTimeTooSkewed: says this machine's clock is off
//   UNAUTHENTICATED    ExpiredToken that stays expired after fetching new credentials, or none
//   UNAVAILABLE        SlowDown, whatever the HTTP status
// then the HTTP status by data/http_status.h, with S3's code in the message:
//   PERMISSION_DENIED  403: access denied, bad signature or unknown key; names the access key id
//   NOT_FOUND          NoSuchBucket, NoSuchKey (a HEAD's 404 says "no such bucket or key")
//   OUT_OF_RANGE       a read past the end (416)
//   UNAVAILABLE        408, 429, 5xx and transport errors, after capped jittered retries that
//                      wait at least a Retry-After
//   FAILED_PRECONDITION  other 4xx answers
// An ExpiredToken answer drops the cached credentials and retries once with fresh ones.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/clock.h"
#include "data/aws_credentials.h"
#include "data/http_request.h"
#include "data/s3_config.h"
#include "data/storage.h"

namespace stoker {

struct S3Object {
  std::string key;
  uint64_t size = 0;
};

// Thread-safe.
class S3Client {
 public:
  S3Client(S3Config config, std::shared_ptr<AwsCredentialChain> credentials, HttpTransport* http,
           Clock* clock);

  // Size of the object.
  absl::StatusOr<uint64_t> Head(const S3Location& location);
  // Exactly n bytes at offset into out.
  absl::Status GetRange(const S3Location& location, uint64_t offset, size_t n, uint8_t* out);
  // The whole object.
  absl::StatusOr<std::string> Get(const S3Location& location);
  // Writes `data` as the object: one PUT up to config.part_bytes, a multipart upload above
  // (aborted when a part fails, so no orphaned parts are left).
  absl::Status Put(const S3Location& location, absl::Span<const uint8_t> data);
  // Every object whose key starts with location.key, in key order (all pages).
  absl::StatusOr<std::vector<S3Object>> List(const S3Location& prefix);

  const S3Config& config() const { return config_; }
  // Requests sent, for metrics and tests.
  uint64_t requests() const { return requests_.load(); }

 private:
  // One signed request with retries; the response of a 2xx answer.
  absl::StatusOr<HttpResponse> Call(const S3Location& location, HttpRequest request,
                                    absl::Span<const uint8_t> body);
  absl::StatusOr<HttpResponse> CallOnce(const S3Location& location, HttpRequest request,
                                        const AwsCredentials& credentials);
  absl::Status PutMultipart(const S3Location& location, absl::Span<const uint8_t> data);

  const S3Config config_;
  const std::shared_ptr<AwsCredentialChain> credentials_;
  HttpTransport* const http_;
  Clock* const clock_;
  std::atomic<uint64_t> requests_{0};
};

// A RandomAccessFile on one object: HEAD at open, a ranged GET per read.
absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenS3File(std::shared_ptr<S3Client> client,
                                                             const std::string& url);

// The status of a non-2xx S3 answer, by the table above (UNAVAILABLE: retry; UNAUTHENTICATED:
// fetch new credentials). Names `location` and `key_id`, nothing else of the credentials. An
// HTTP-date Retry-After is read against `clock`.
absl::Status S3ErrorStatus(const HttpResponse& response, const S3Location& location,
                           const std::string& key_id, Clock* clock);

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(absl::Span<const uint8_t> data);

}  // namespace stoker

#endif  // STOKER_DATA_S3_CLIENT_H_
