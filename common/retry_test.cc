#include "common/retry.h"

#include <thread>

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

}  // namespace
}  // namespace stoker
