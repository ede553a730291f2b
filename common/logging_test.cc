#include "common/logging.h"

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

const absl::Time kTime = absl::FromUnixMillis(1'795'000'000'123);

TEST(LoggingTest, JsonLineIsOneEscapedObject) {
  EXPECT_EQ(FormatLogLine(LogFormat::kJson, LogLevel::kWarning, "worker.cc", 88,
                          "lost \"w1\"\n\tretrying\x01", kTime),
            "{\"time\":\"2026-11-18T11:06:40.123Z\",\"level\":\"warning\",\"file\":\"worker.cc\","
            "\"line\":88,\"msg\":\"lost \\\"w1\\\"\\n\\tretrying\\u0001\"}\n");
}

TEST(LoggingTest, TextLineHasLevelFileAndMessage) {
  EXPECT_THAT(FormatLogLine(LogFormat::kText, LogLevel::kInfo, "a.cc", 3, "hello", kTime),
              ::testing::MatchesRegex("I [0-9:.]+ a.cc:3\\] hello\n"));
}

TEST(LoggingTest, FormatFlagAcceptsTextAndJsonOnly) {
  LogFlags flags;
  flags.format = "xml";
  const absl::Status status = flags.Apply();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("--log-format"));
  flags.format = "json";
  EXPECT_TRUE(flags.Apply().ok());
  flags.format = "text";
  EXPECT_TRUE(flags.Apply().ok());
}

}  // namespace
}  // namespace stoker
