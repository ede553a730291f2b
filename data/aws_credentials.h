#ifndef STOKER_DATA_AWS_CREDENTIALS_H_
#define STOKER_DATA_AWS_CREDENTIALS_H_

// AWS credentials, resolved as the AWS CLI and SDKs resolve them, first match wins:
//
//   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY [+ AWS_SESSION_TOKEN];
//   2. shared files: AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) section [P], then
//      AWS_CONFIG_FILE (~/.aws/config) section [profile P] ([default] for "default"), where P is
//      AWS_PROFILE or "default" (a profile named by AWS_PROFILE that exists in neither file is
//      an error);
//   3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME],
//      through STS AssumeRoleWithWebIdentity (an unsigned POST; endpoint AWS_ENDPOINT_URL_STS,
//      else AWS_ENDPOINT_URL, else https://sts.<region>.amazonaws.com), as EKS pods get them;
//   4. the container endpoint: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on 169.254.170.2) or
//      AWS_CONTAINER_CREDENTIALS_FULL_URI, with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE);
//   5. the instance metadata service (IMDSv2: a session token, then the role's credentials) at
//      AWS_EC2_METADATA_SERVICE_ENDPOINT or http://169.254.169.254, unless
//      AWS_EC2_METADATA_DISABLED=true.
//
// Temporary credentials (2-5) carry an expiration; AwsCredentialChain hands out the cached set
// until it is within a refresh margin of expiring (5 minutes, or a quarter of the lifetime when
// that is shorter), then resolves again.
//
// Secrets never appear in a status or a log line: messages name the source and at most the
// access key id. The environment (variables, files, clock, HTTP) is injected, so every source
// is unit-tested without touching the real one.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "data/http_request.h"

namespace stoker {

// Thread-compatible. Deliberately without a printer.
struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // Empty for long-term keys.
  std::optional<absl::Time> expiration;
  std::string source;  // "environment", "profile default", "web identity", ...
};

// What the chain reads from the outside world. Thread-safe when its members are.
struct AwsEnvironment {
  // The variable's value, "" when unset.
  std::function<std::string(const std::string&)> getenv;
  // The file's contents; NOT_FOUND when it does not exist.
  std::function<absl::StatusOr<std::string>(const std::string&)> read_file;
  Clock* clock = nullptr;
  HttpTransport* http = nullptr;

  // The process's environment, file system, real clock and libcurl.
  static AwsEnvironment Real();
};

// Resolves, caches and refreshes credentials. Thread-safe.
class AwsCredentialChain {
 public:
  explicit AwsCredentialChain(AwsEnvironment env) : env_(std::move(env)) {}

  // The cached credentials, resolved again when missing or near expiry. Errors:
  // UNAUTHENTICATED when no source has credentials (the message lists what was tried);
  // a configured source that fails keeps its code (PERMISSION_DENIED from STS,
  // UNAVAILABLE for an unreachable endpoint, INVALID_ARGUMENT for a malformed file or answer).
  absl::StatusOr<AwsCredentials> Get();
  // Drops the cache (after the server said the token expired).
  void Invalidate();

 private:
  absl::StatusOr<AwsCredentials> Resolve();

  const AwsEnvironment env_;
  absl::Mutex mu_;
  std::optional<AwsCredentials> cached_ ABSL_GUARDED_BY(mu_);
  absl::Time fetched_ ABSL_GUARDED_BY(mu_);
};

// The sources one by one (Resolve tries them in order). Each returns nullopt when it is not
// configured in `env`, and errors as AwsCredentialChain::Get when it is but fails.
absl::StatusOr<std::optional<AwsCredentials>> CredentialsFromEnvironment(const AwsEnvironment& env);
absl::StatusOr<std::optional<AwsCredentials>> CredentialsFromProfile(const AwsEnvironment& env);
absl::StatusOr<std::optional<AwsCredentials>> CredentialsFromWebIdentity(const AwsEnvironment& env);
absl::StatusOr<std::optional<AwsCredentials>> CredentialsFromContainer(const AwsEnvironment& env);
absl::StatusOr<std::optional<AwsCredentials>> CredentialsFromInstanceMetadata(
    const AwsEnvironment& env);

// The value of <tag>...</tag> in `xml` (entities decoded), or nullopt. For S3's and STS's
// answers, whose elements carry no attributes.
std::optional<std::string> XmlValue(absl::string_view xml, absl::string_view tag);

}  // namespace stoker

#endif  // STOKER_DATA_AWS_CREDENTIALS_H_
