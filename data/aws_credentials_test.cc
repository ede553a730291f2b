// The credential chain with an injected environment: variables, files, clock and a fake HTTP
// transport standing in for STS and the metadata endpoints (the real endpoints are exercised
// against the loopback server in s3_client_test).

#include "data/aws_credentials.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Answers requests by URL from a table; counts them. Thread-compatible (tests are serial).
class FakeHttp : public HttpTransport {
 public:
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    ++calls[request.url];
    last_body = std::string(request.body.begin(), request.body.end());
    const auto it = answers.find(request.url);
    if (it == answers.end()) return absl::UnavailableError("connection refused");
    return it->second;
  }
  std::map<std::string, HttpResponse> answers;
  std::map<std::string, int> calls;
  std::string last_body;
};

HttpResponse Answer(long status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

class CredentialsTest : public ::testing::Test {
 protected:
  AwsEnvironment Env() {
    AwsEnvironment env;
    env.getenv = [this](const std::string& name) {
      const auto it = vars_.find(name);
      return it == vars_.end() ? std::string() : it->second;
    };
    env.read_file = [this](const std::string& path) -> absl::StatusOr<std::string> {
      const auto it = files_.find(path);
      if (it == files_.end()) return absl::NotFoundError(path);
      return it->second;
    };
    env.clock = &clock_;
    env.http = &http_;
    vars_["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = "http://imds";
    return env;
  }

  std::string StsAnswer(const std::string& id, absl::Time expires) {
    return "<AssumeRoleWithWebIdentityResponse><Credentials><AccessKeyId>" + id +
           "</AccessKeyId><SecretAccessKey>s&amp;cret</SecretAccessKey><SessionToken>tok" +
           "</SessionToken><Expiration>" +
           absl::FormatTime(absl::RFC3339_sec, expires, absl::UTCTimeZone()) +
           "</Expiration></Credentials></AssumeRoleWithWebIdentityResponse>";
  }

  std::map<std::string, std::string> vars_;
  std::map<std::string, std::string> files_;
  FakeClock clock_;
  FakeHttp http_;
};

TEST_F(CredentialsTest, EnvironmentComesFirst) {
  vars_ = {{"AWS_ACCESS_KEY_ID", "AKIAENV"},
           {"AWS_SECRET_ACCESS_KEY", "s"},
           {"AWS_SESSION_TOKEN", "t"},
           {"HOME", "/home/u"}};
  files_["/home/u/.aws/credentials"] =
      "[default]\naws_access_key_id=AKIAFILE\n"
      "aws_secret_access_key=f\n";
  AwsCredentialChain chain(Env());
  auto got = chain.Get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->access_key_id, "AKIAENV");
  EXPECT_EQ(got->session_token, "t");
  EXPECT_EQ(got->source, "environment");
}

TEST_F(CredentialsTest, AnIdWithoutSecretNamesTheVariableNotASecret) {
  vars_ = {{"AWS_ACCESS_KEY_ID", "AKIAENV"}};
  auto got = AwsCredentialChain(Env()).Get();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("AWS_SECRET_ACCESS_KEY"));
}

TEST_F(CredentialsTest, ProfilesFromCredentialsThenConfigFile) {
  vars_ = {{"HOME", "/home/u"}, {"AWS_PROFILE", "team"}};
  files_["/home/u/.aws/credentials"] =
      "[default]\naws_access_key_id = AKIADEF\n"
      "aws_secret_access_key = d\n";
  files_["/home/u/.aws/config"] =
      "# comment\n[profile team]\nregion = eu-west-1\n"
      "aws_access_key_id = AKIATEAM\naws_secret_access_key = t\n";
  auto got = AwsCredentialChain(Env()).Get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->access_key_id, "AKIATEAM");
  EXPECT_THAT(got->source, HasSubstr("profile team"));

  vars_["AWS_PROFILE"] = "nobody";
  auto missing = AwsCredentialChain(Env()).Get();
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("AWS_PROFILE=nobody"));
}

TEST_F(CredentialsTest, WebIdentityThroughStsIsRefreshedBeforeExpiry) {
  vars_ = {{"AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"},
           {"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"},
           {"AWS_ENDPOINT_URL_STS", "http://sts"}};
  files_["/var/run/token"] = "jwt-token\n";
  http_.answers["http://sts/"] = Answer(200, StsAnswer("ASIA1", clock_.Now() + absl::Hours(1)));
  AwsCredentialChain chain(Env());
  auto first = chain.Get();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->access_key_id, "ASIA1");
  EXPECT_EQ(first->secret_access_key, "s&cret");
  EXPECT_THAT(http_.last_body, HasSubstr("Action=AssumeRoleWithWebIdentity"));
  EXPECT_THAT(http_.last_body, HasSubstr("WebIdentityToken=jwt-token"));
  EXPECT_THAT(http_.last_body, HasSubstr("RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fr"));

  http_.answers["http://sts/"] = Answer(200, StsAnswer("ASIA2", clock_.Now() + absl::Hours(2)));
  clock_.Advance(absl::Minutes(54));  // 6 minutes left: still outside the 5-minute margin.
  EXPECT_EQ(chain.Get()->access_key_id, "ASIA1");
  clock_.Advance(absl::Minutes(2));  // 4 minutes left: refreshed.
  EXPECT_EQ(chain.Get()->access_key_id, "ASIA2");
  EXPECT_EQ(http_.calls["http://sts/"], 2);
}

TEST_F(CredentialsTest, ShortLivedTokensRefreshAtAQuarterOfTheirLifetime) {
  vars_ = {{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://ecs/creds"},
           {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "auth"}};
  const std::string expires =
      absl::FormatTime(absl::RFC3339_sec, clock_.Now() + absl::Seconds(40), absl::UTCTimeZone());
  http_.answers["http://ecs/creds"] =
      Answer(200, R"({"AccessKeyId":"ASIAC","SecretAccessKey":"x","Token":"t","Expiration":")" +
                      expires + "\"}");
  AwsCredentialChain chain(Env());
  EXPECT_EQ(chain.Get()->access_key_id, "ASIAC");
  clock_.Advance(absl::Seconds(29));
  chain.Get().IgnoreError();
  EXPECT_EQ(http_.calls["http://ecs/creds"], 1);
  clock_.Advance(absl::Seconds(2));  // 9 s of 40 left: under a quarter.
  chain.Get().IgnoreError();
  EXPECT_EQ(http_.calls["http://ecs/creds"], 2);
}

TEST_F(CredentialsTest, StsRefusalIsPermissionDenied) {
  vars_ = {{"AWS_WEB_IDENTITY_TOKEN_FILE", "/t"},
           {"AWS_ROLE_ARN", "arn:r"},
           {"AWS_ENDPOINT_URL", "http://sts"}};
  files_["/t"] = "jwt";
  http_.answers["http://sts/"] = Answer(403, "<Error><Code>AccessDenied</Code></Error>");
  auto got = AwsCredentialChain(Env()).Get();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(got.status().message(), HasSubstr("AccessDenied"));
  EXPECT_THAT(got.status().message(), Not(HasSubstr("jwt")));
}

TEST_F(CredentialsTest, InstanceMetadataUsesASessionToken) {
  http_.answers["http://imds/latest/api/token"] = Answer(200, "imds-token");
  http_.answers["http://imds/latest/meta-data/iam/security-credentials/"] = Answer(200, "role\n");
  http_.answers["http://imds/latest/meta-data/iam/security-credentials/role"] =
      Answer(200, R"({"AccessKeyId":"ASIAI","SecretAccessKey":"x","Token":"t"})");
  auto got = AwsCredentialChain(Env()).Get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->access_key_id, "ASIAI");
  EXPECT_THAT(got->source, HasSubstr("role role"));
}

TEST_F(CredentialsTest, NothingConfiguredIsUnauthenticated) {
  vars_["AWS_EC2_METADATA_DISABLED"] = "true";
  auto got = AwsCredentialChain(Env()).Get();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(http_.calls.empty());
}

}  // namespace
}  // namespace stoker
