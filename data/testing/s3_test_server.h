#ifndef STOKER_DATA_TESTING_S3_TEST_SERVER_H_
#define STOKER_DATA_TESTING_S3_TEST_SERVER_H_

// Starts tests/s3/s3_test_server.js (s3rver behind a SigV4-verifying proxy, plus fake STS,
// container and instance-metadata endpoints) on a free loopback port, for the `s3` tests and
// bench/. Objects live in a private temporary folder that outlives Stop(), so Restart() brings
// the same bucket back on the same port. The destructor stops it.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/testing/shard_fixtures.h"

namespace stoker {
namespace testing {

struct S3TestServerOptions {
  std::vector<std::string> buckets = {"data"};
  // Static key pairs the server accepts.
  std::string access_key_id = "AKIASTOKERTEST";
  std::string secret_access_key = "stoker-test-secret-0123456789";
  // Lifetime of the temporary credentials STS and the metadata endpoints issue.
  int sts_ttl_seconds = 900;
  std::string web_identity_token = "web-identity-token";
  std::string role_arn = "arn:aws:iam::123456789012:role/stoker";
  std::string container_token = "container-token";
};

// Thread-compatible.
class S3TestServer {
 public:
  // FAILED_PRECONDITION when node or the npm packages are missing (scripts/install-deps.sh);
  // UNAVAILABLE when the server does not answer within 20 s (its output is in the message).
  static absl::StatusOr<std::unique_ptr<S3TestServer>> Start(S3TestServerOptions options = {});
  ~S3TestServer();

  // "http://127.0.0.1:<port>"
  std::string endpoint() const;
  const S3TestServerOptions& options() const { return options_; }
  // Lines of the request log: "METHOD /bucket/key STATUS".
  std::vector<std::string> LogLines() const;
  // Requests with `method` whose path contains `fragment`, from the log.
  int CountRequests(const std::string& method, const std::string& fragment) const;
  // Every byte the server printed (for checks that no secret leaks).
  std::string Output() const;

  // The next `count` S3 requests are answered `http_status` (503 SlowDown, 429 TooManyRequests
  // or 408 RequestTimeout), with a Retry-After header of `retry_after` when it is not empty.
  void FailNext(int count, int http_status = 503, const std::string& retry_after = "");

  void Stop();
  // Starts again on the same port with the same objects.
  absl::Status Restart();

 private:
  explicit S3TestServer(S3TestServerOptions options) : options_(std::move(options)) {}
  absl::Status Launch();

  const S3TestServerOptions options_;
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace testing
}  // namespace stoker

#endif  // STOKER_DATA_TESTING_S3_TEST_SERVER_H_
