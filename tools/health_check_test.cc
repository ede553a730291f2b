#include "tools/health_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "coordinator/coordinator_server.h"
#include "coordinator/status_matchers_for_test.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

MATCHER_P(IsOkAndHolds, value, "is OK and holds " + std::string(ServingStatusName(value))) {
  if (!arg.ok()) *result_listener << "status is " << arg.status();
  return arg.ok() && *arg == value;
}

TEST(HealthCheckTest, EncodesTheServiceName) {
  EXPECT_EQ(EncodeHealthCheckRequest(""), "");
  EXPECT_EQ(EncodeHealthCheckRequest("stoker.v1.Worker"), std::string("\x0a\x10stoker.v1.Worker"));
}

TEST(HealthCheckTest, ParsesEveryStatus) {
  EXPECT_THAT(ParseHealthCheckResponse(""), IsOkAndHolds(ServingStatus::kUnknown));
  EXPECT_THAT(ParseHealthCheckResponse(std::string("\x08\x01", 2)),
              IsOkAndHolds(ServingStatus::kServing));
  EXPECT_THAT(ParseHealthCheckResponse(std::string("\x08\x02", 2)),
              IsOkAndHolds(ServingStatus::kNotServing));
  // An unknown field is skipped, as protobuf would.
  EXPECT_THAT(ParseHealthCheckResponse(std::string("\x10\x05\x08\x03", 4)),
              IsOkAndHolds(ServingStatus::kServiceUnknown));
  EXPECT_STREQ(ServingStatusName(ServingStatus::kNotServing), "NOT_SERVING");
}

TEST(HealthCheckTest, RejectsMalformedResponses) {
  EXPECT_THAT(ParseHealthCheckResponse(std::string("\x08", 1)),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("does not parse")));
  EXPECT_THAT(ParseHealthCheckResponse(std::string("\x08\x09", 2)),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("status 9")));
}

TEST(HealthCheckTest, AsksARealServer) {
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(
      [] {
        CoordinatorConfig config;  // 127.0.0.1:0
        config.tls = TlsConfig::Plaintext();
        return config;
      }(),
      DatasetIo::FromEnvironment());
  ASSERT_THAT(server, IsOk());
  const std::string address = (*server)->address();
  EXPECT_THAT(CheckHealth(address, "", absl::Seconds(10), TlsConfig::Plaintext()),
              IsOkAndHolds(ServingStatus::kServing));
  EXPECT_THAT(CheckHealth(address, "no.such.Service", absl::Seconds(10), TlsConfig::Plaintext()),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(address)));
  (*server)->Stop();
  EXPECT_THAT(CheckHealth(address, "", absl::Seconds(10), TlsConfig::Plaintext()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(address)));
}

}  // namespace
}  // namespace stoker
