#include "common/retry.h"

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

TEST(BackoffDelayTest, GrowsAndCaps) {
  BackoffPolicy policy{absl::Milliseconds(100), absl::Milliseconds(500), 2.0, 10};
  EXPECT_EQ(BackoffDelay(policy, 1, 1.0), absl::Milliseconds(100));
  EXPECT_EQ(BackoffDelay(policy, 2, 1.0), absl::Milliseconds(200));
  EXPECT_EQ(BackoffDelay(policy, 3, 1.0), absl::Milliseconds(400));
  EXPECT_EQ(BackoffDelay(policy, 4, 1.0), absl::Milliseconds(500));
  EXPECT_EQ(BackoffDelay(policy, 4, 0.0), absl::Milliseconds(250));
}

TEST(RetryUnavailableTest, StopsOnSuccess) {
  BackoffPolicy policy{absl::ZeroDuration(), absl::ZeroDuration(), 2.0, 5};
  int calls = 0;
  absl::Status status = RetryUnavailable(policy, Clock::Real(), [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 3);
}

TEST(RetryUnavailableTest, DoesNotRetryOtherErrors) {
  BackoffPolicy policy{absl::ZeroDuration(), absl::ZeroDuration(), 2.0, 5};
  int calls = 0;
  absl::Status status = RetryUnavailable(policy, Clock::Real(), [&] {
    ++calls;
    return absl::InvalidArgumentError("bad");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

TEST(RetryUnavailableTest, GivesUpWithUnavailableAndKeepsMessage) {
  BackoffPolicy policy{absl::ZeroDuration(), absl::ZeroDuration(), 2.0, 4};
  int calls = 0;
  absl::Status status = RetryUnavailable(policy, Clock::Real(), [&] {
    ++calls;
    return absl::UnavailableError("coordinator 127.0.0.1:1: connection refused");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("after 4 attempts"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("127.0.0.1:1"));
  EXPECT_EQ(calls, 4);
}

TEST(RetryUnavailableTest, SleepsOnInjectedClock) {
  FakeClock clock;
  BackoffPolicy policy{absl::Seconds(1), absl::Seconds(1), 1.0, 2};
  int calls = 0;
  std::thread retrier([&] {
    (void)RetryUnavailable(policy, &clock, [&] {
      ++calls;
      return absl::UnavailableError("down");
    });
  });
  clock.AwaitSleepers(1);
  clock.Advance(absl::Seconds(1));  // Enough for the one backoff (jittered to [0.5s, 1s]).
  retrier.join();
  EXPECT_EQ(calls, 2);
}

TEST(RetryAfterTest, TravelsOnTheStatusAndKeepsCodeAndMessage) {
  const absl::Status busy = WithRetryAfter(absl::UnavailableError("HTTP 429"), absl::Seconds(3));
  EXPECT_EQ(busy.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(busy.message(), "HTTP 429");
  EXPECT_EQ(RetryAfterOf(busy), absl::Seconds(3));
  EXPECT_EQ(RetryAfterOf(absl::UnavailableError("HTTP 503")), std::nullopt);
}

TEST(RetryAfterTest, TheLongerOfBackoffAndServerWaitUpToTheCap) {
  BackoffPolicy policy{absl::Milliseconds(100), absl::Seconds(1), 2.0, 5};
  policy.max_retry_after = absl::Seconds(10);
  const absl::Status plain = absl::UnavailableError("busy");
  EXPECT_EQ(RetryDelay(policy, 1, 1.0, plain), absl::Milliseconds(100));
  EXPECT_EQ(RetryDelay(policy, 1, 1.0, WithRetryAfter(plain, absl::Seconds(4))), absl::Seconds(4));
  EXPECT_EQ(RetryDelay(policy, 1, 1.0, WithRetryAfter(plain, absl::Seconds(60))),
            absl::Seconds(10));
  // A server asking for less than the backoff does not shorten it.
  EXPECT_EQ(RetryDelay(policy, 5, 1.0, WithRetryAfter(plain, absl::Milliseconds(1))),
            absl::Seconds(1));
}

TEST(RetryAfterTest, RetryUnavailableWaitsWhatTheServerAsked) {
  SleepRecordingClock clock;
  BackoffPolicy policy{absl::Milliseconds(1), absl::Milliseconds(1), 1.0, 3};
  int calls = 0;
  const absl::Status status = RetryUnavailable(policy, &clock, [&] {
    ++calls;
    if (calls == 1) return WithRetryAfter(absl::UnavailableError("HTTP 429"), absl::Seconds(5));
    if (calls == 2) return absl::UnavailableError("HTTP 503");
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(calls, 3);
  const std::vector<absl::Duration> sleeps = clock.sleeps();
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_EQ(sleeps[0], absl::Seconds(5));
  EXPECT_LE(sleeps[1], absl::Milliseconds(1));
}

TEST(ValidateBackoffPolicyTest, NamesTheBadField) {
  EXPECT_TRUE(ValidateBackoffPolicy(BackoffPolicy(), "s3.backoff").ok());
  BackoffPolicy policy;
  policy.max_attempts = 0;
  absl::Status status = ValidateBackoffPolicy(policy, "s3.backoff");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("s3.backoff.max_attempts: must be >= 1"));
  policy = BackoffPolicy();
  policy.max = absl::Milliseconds(1);
  status = ValidateBackoffPolicy(policy, "connect_backoff");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("connect_backoff: must have 0 <= initial"));
  policy = BackoffPolicy();
  policy.multiplier = 0.5;
  EXPECT_THAT(std::string(ValidateBackoffPolicy(policy, "b").message()),
              HasSubstr("b.multiplier: must be >= 1"));
  policy = BackoffPolicy();
  policy.max_retry_after = absl::Seconds(-1);
  EXPECT_THAT(std::string(ValidateBackoffPolicy(policy, "b").message()),
              HasSubstr("b.max_retry_after: must be >= 0"));
}

}  // namespace
}  // namespace stoker
