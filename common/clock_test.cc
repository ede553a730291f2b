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

}  // namespace
}  // namespace stoker
