// Fuzz target: the AWS credentials and config files (data/aws_credentials.h: the INI sections of
// ~/.aws/credentials and ~/.aws/config, AWS_PROFILE), the answers of the container credentials
// endpoint (JSON) and of STS (XML), and the S3 settings taken from the environment
// (data/s3_config.h: endpoint, region, s3:// URLs).
//
// Input, framed by SplitChunks (fuzz_input.h): the credentials file, the config file,
// AWS_PROFILE, AWS_ENDPOINT_URL, AWS_REGION, an s3:// URL, the container endpoint's answer, the
// STS answer. Everything is in memory (an injected environment, file reader and HTTP transport).
// Invariants checked:
//   - each source returns credentials with an access key id and a secret, nothing, or an error
//     of the codes aws_credentials.h documents;
//   - no error message contains a secret of the files: every aws_secret_access_key value is
//     replaced by a marker first, and the marker must not appear in a message; credentials read
//     from the files carry exactly that value;
//   - S3: a refused URL or endpoint is INVALID_ARGUMENT; an object URL on a valid endpoint
//     starts with it, and the key part is URI-encoded.

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "data/aws_credentials.h"
#include "data/s3_config.h"
#include "tests/fuzz/fuzz_input.h"

namespace stoker {
namespace {

enum Chunk { kCredentials, kConfig, kProfile, kEndpoint, kRegion, kS3Url, kJson, kXml, kChunks };

// Answers every request 200 with one body. Thread-compatible.
class OneAnswerHttp : public HttpTransport {
 public:
  explicit OneAnswerHttp(std::string body) : body_(std::move(body)) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest&) override {
    HttpResponse response;
    response.status = 200;
    response.body = body_;
    return response;
  }

 private:
  const std::string body_;
};

// Stands for every secret of the files: a message containing it leaks a secret.
constexpr absl::string_view kSecretMarker = "<secret-marker>";

// `file` with the value of every aws_secret_access_key line (as ParseIni reads one) replaced by
// kSecretMarker; empty values stay empty (that is an error of its own).
std::string MarkSecrets(absl::string_view file) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(file, '\n')) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    const size_t eq = stripped.find('=');
    if (eq != absl::string_view::npos &&
        absl::StripAsciiWhitespace(stripped.substr(0, eq)) == "aws_secret_access_key" &&
        !absl::StripAsciiWhitespace(stripped.substr(eq + 1)).empty()) {
      lines.push_back(absl::StrCat("aws_secret_access_key = ", kSecretMarker));
    } else {
      lines.emplace_back(line);
    }
  }
  return absl::StrJoin(lines, "\n");
}

void CheckFound(const absl::StatusOr<std::optional<AwsCredentials>>& found,
                std::initializer_list<absl::StatusCode> codes) {
  if (found.ok()) {
    if (found->has_value()) FUZZ_CHECK(!(*found)->secret_access_key.empty());
    return;
  }
  FUZZ_CHECK(std::find(codes.begin(), codes.end(), found.status().code()) != codes.end());
  FUZZ_CHECK(!absl::StrContains(found.status().message(), kSecretMarker));
}

void CheckS3(const std::map<std::string, std::string>& vars, absl::string_view url) {
  const S3Config config = S3Config::FromEnvironment([&vars](const std::string& name) {
    const auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  });
  absl::StatusOr<S3Location> location = ParseS3Url(url);
  if (!location.ok()) {
    FUZZ_CHECK(location.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(location->ToUrl() ==
             (absl::StrContains(url.substr(5), "/") ? std::string(url) : absl::StrCat(url, "/")));
  const absl::Status valid = config.Validate();
  if (!valid.ok()) {
    FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StartsWith(valid.message(), "s3.endpoint: "));
    return;
  }
  const std::string object = config.ObjectUrl(*location, {{"list-type", "2"}, {"prefix", "a b"}});
  const std::string key = AwsUriEncode(location->key, /*keep_slash=*/true);
  FUZZ_CHECK(absl::StrContains(object, key));
  if (config.endpoint.empty()) return;
  absl::string_view endpoint = config.endpoint;
  while (absl::ConsumeSuffix(&endpoint, "/")) {
  }
  FUZZ_CHECK(absl::StartsWith(object, endpoint));
}

}  // namespace
}  // namespace stoker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stoker::Chunk;
  std::vector<std::string> chunks;
  for (absl::string_view chunk : stoker::fuzz::SplitChunks(
           absl::string_view(reinterpret_cast<const char*>(data), size), stoker::kChunks)) {
    chunks.emplace_back(chunk);
  }
  chunks.resize(stoker::kChunks);
  for (const std::string& chunk : chunks) {
    if (absl::StrContains(chunk, stoker::kSecretMarker)) return 0;
  }
  const std::map<std::string, std::string> files = {
      {"/home/fuzz/.aws/credentials", stoker::MarkSecrets(chunks[stoker::kCredentials])},
      {"/home/fuzz/.aws/config", stoker::MarkSecrets(chunks[stoker::kConfig])},
      {"/var/run/token", "eyJ.token"}};
  std::map<std::string, std::string> vars = {
      {"HOME", "/home/fuzz"},
      {"AWS_PROFILE", chunks[stoker::kProfile]},
      {"AWS_ENDPOINT_URL", chunks[stoker::kEndpoint]},
      {"AWS_REGION", chunks[stoker::kRegion]},
      {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1/creds"},
      {"AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"},
      {"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"}};
  stoker::FakeClock clock;
  stoker::OneAnswerHttp json(chunks[stoker::kJson]);
  stoker::OneAnswerHttp xml(chunks[stoker::kXml]);
  stoker::AwsEnvironment env;
  env.getenv = [&vars](const std::string& name) {
    const auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
  env.read_file = [&files](const std::string& path) -> absl::StatusOr<std::string> {
    const auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError(path);
    return it->second;
  };
  env.clock = &clock;

  absl::StatusOr<std::optional<stoker::AwsCredentials>> profile =
      stoker::CredentialsFromProfile(env);
  stoker::CheckFound(profile, {absl::StatusCode::kInvalidArgument, absl::StatusCode::kNotFound});
  if (profile.ok() && profile->has_value()) {
    FUZZ_CHECK((*profile)->secret_access_key == stoker::kSecretMarker);
  }
  env.http = &json;
  stoker::CheckFound(stoker::CredentialsFromContainer(env), {absl::StatusCode::kInvalidArgument});
  env.http = &xml;
  stoker::CheckFound(stoker::CredentialsFromWebIdentity(env), {absl::StatusCode::kInvalidArgument});
  stoker::CheckS3(vars, chunks[stoker::kS3Url]);
  return 0;
}
