#include "common/clock.h"

#include <thread>

#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(FakeClockTest, AdvanceMovesTime) {
  FakeClock clock(absl::FromUnixSeconds(100));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(100));
  clock.Advance(absl::Milliseconds(1500));
  EXPECT_EQ(clock.NowUnixMillis(), 101'500);
}

TEST(FakeClockTest, SleepForWakesWhenAdvancedPastDeadline) {
  FakeClock clock(absl::FromUnixSeconds(0));
  std::thread sleeper([&] { clock.SleepFor(absl::Seconds(10)); });
  clock.AwaitSleepers(1);
  clock.Advance(absl::Seconds(4));
  clock.Advance(absl::Seconds(6));
  sleeper.join();  // Returns only because time reached the deadline.
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(10));
}

TEST(FakeClockTest, AwaitWithDeadlineTimesOutOnFakeTimeOnly) {
  FakeClock clock(absl::FromUnixSeconds(0));
  absl::Mutex mu;
  bool flag = false;
  bool met = true;
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    met = clock.AwaitWithTimeout(&mu, absl::Condition(&flag), absl::Seconds(10));
  });
  clock.AwaitSleepers(1);
  clock.Advance(absl::Seconds(9));  // not yet: the waiter re-checks and waits on
  clock.AwaitSleepers(1);
  clock.Advance(absl::Seconds(1));
  waiter.join();
  EXPECT_FALSE(met);
}

TEST(FakeClockTest, AwaitWithDeadlineReturnsWhenTheConditionHolds) {
  FakeClock clock(absl::FromUnixSeconds(0));
  absl::Mutex mu;
  bool flag = false;
  bool met = false;
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    met = clock.AwaitWithDeadline(&mu, absl::Condition(&flag), absl::FromUnixSeconds(60));
  });
  clock.AwaitSleepers(1);
  {
    absl::MutexLock lock(&mu);
    flag = true;
  }
  waiter.join();  // without any Advance
  EXPECT_TRUE(met);
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(0));
}

TEST(SteppingClockTest, EveryReadMovesOneStep) {
  SteppingClock clock(absl::Milliseconds(2), absl::FromUnixSeconds(100));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(100) + absl::Milliseconds(2));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(100) + absl::Milliseconds(4));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(101) + absl::Milliseconds(6));
}

// Monotonic, yet anchored at the wall time: logs and peers still read it as the date.
TEST(RealClockTest, ReadsAsWallTimeAndNeverGoesBack) {
  absl::Time previous = Clock::Real()->Now();
  EXPECT_LT(absl::AbsDuration(previous - absl::Now()), absl::Minutes(1));
  for (int i = 0; i < 1000; ++i) {
    const absl::Time now = Clock::Real()->Now();
    EXPECT_GE(now, previous);
    previous = now;
  }
}

TEST(RealClockTest, AwaitWithTimeoutTimesOutOrSeesTheCondition) {
  absl::Mutex mu;
  bool flag = false;
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(Clock::Real()->AwaitWithTimeout(&mu, absl::Condition(&flag), absl::Milliseconds(1)));
  flag = true;
  EXPECT_TRUE(Clock::Real()->AwaitWithTimeout(&mu, absl::Condition(&flag), absl::Seconds(10)));
}

}  // namespace
}  // namespace stoker
