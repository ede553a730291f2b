#ifndef STOKER_DATA_S3_CONFIG_H_
#define STOKER_DATA_S3_CONFIG_H_

// Where S3 objects live and how their URLs are formed (docs/storage.md).
//
//   s3://bucket/key  →  path-style:      <endpoint>/bucket/key
//                       virtual-hosted:  <scheme>://bucket.<endpoint host>/key
//
// Without an endpoint, AWS itself: https://s3.<region>.amazonaws.com, virtual-hosted. With one
// (an S3-compatible store: MinIO, Ceph, a test server), path-style unless told otherwise. Keys
// and query values are URI-encoded as SigV4 expects (RFC 3986 unreserved characters kept, '/'
// kept in keys) and query parameters sorted, because curl 7.88 signs the query as it is given.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/retry.h"

namespace stoker {

// s3://bucket/key, split.
struct S3Location {
  std::string bucket;
  std::string key;  // May be empty (a bucket) or a prefix.

  std::string ToUrl() const { return "s3://" + bucket + "/" + key; }
};

// True for "s3://...".
bool IsS3Url(absl::string_view location);

// INVALID_ARGUMENT naming `url` when it is not s3://bucket[/key] with a valid bucket name
// (3..63 characters of a-z, 0-9, '.', '-').
absl::StatusOr<S3Location> ParseS3Url(absl::string_view url);

// SigV4's URI encoding: A-Z a-z 0-9 - _ . ~ kept (and '/' when keep_slash), the rest %XX.
std::string AwsUriEncode(absl::string_view text, bool keep_slash);

// Thread-compatible. Filled from flags (--s3-endpoint, --s3-addressing) over the environment.
struct S3Config {
  enum class Addressing { kAuto, kPath, kVirtualHosted };

  // "http://127.0.0.1:9000" or "https://storage.example.com"; empty: AWS for `region`.
  std::string endpoint;
  // Empty: us-east-1.
  std::string region;
  // kAuto: virtual-hosted on AWS, path-style on a custom endpoint.
  Addressing addressing = Addressing::kAuto;
  // Retries of SlowDown, 500, 503 and transport errors (capped, jittered).
  BackoffPolicy backoff{absl::Milliseconds(100), absl::Seconds(5), 2.0, 6};
  absl::Duration request_timeout = absl::Seconds(120);
  absl::Duration connect_timeout = absl::Seconds(10);
  // Objects larger than this are uploaded in parts of this size (S3: 5 MiB..5 GiB).
  uint64_t part_bytes = uint64_t{16} << 20;
  // Keys per ListObjectsV2 page (S3 answers at most 1000).
  uint32_t list_page_keys = 1000;

  // endpoint from AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; region from AWS_REGION, else
  // AWS_DEFAULT_REGION. `getenv` returns "" for an unset variable.
  static S3Config FromEnvironment(const std::function<std::string(const std::string&)>& getenv);

  // INVALID_ARGUMENT naming the field: s3.endpoint (not http(s)://host[:port], or a path),
  // s3.part_bytes (outside 5 MiB..5 GiB), s3.backoff.
  absl::Status Validate() const;

  std::string ResolvedRegion() const { return region.empty() ? "us-east-1" : region; }
  // The URL of `location` with `query` (name, value pairs; sorted and encoded here).
  std::string ObjectUrl(const S3Location& location,
                        std::vector<std::pair<std::string, std::string>> query = {}) const;
};

}  // namespace stoker

#endif  // STOKER_DATA_S3_CONFIG_H_
