#include "common/sliding_window.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'000'000);

TEST(SlidingWindowTest, SumsWhatWasAddedInTheSpan) {
  SlidingWindow window(kStart, absl::Seconds(10), 10);
  window.Add(kStart + absl::Milliseconds(500), 2);
  window.Add(kStart + absl::Milliseconds(2500), 3);
  const absl::Time now = kStart + absl::Seconds(4);
  EXPECT_DOUBLE_EQ(window.Sum(now), 5);
  EXPECT_EQ(window.Span(now), absl::Seconds(4));
  EXPECT_DOUBLE_EQ(window.RatePerSecond(now), 1.25);
}

TEST(SlidingWindowTest, OldBucketsFallOut) {
  SlidingWindow window(kStart, absl::Seconds(10), 10);
  window.Add(kStart + absl::Milliseconds(500), 100);  // Bucket 0.
  window.Add(kStart + absl::Milliseconds(9500), 1);   // Bucket 9.
  EXPECT_DOUBLE_EQ(window.Sum(kStart + absl::Milliseconds(9900)), 101);
  // At 10.2 s the window is buckets 1..10: bucket 0 has left it.
  const absl::Time now = kStart + absl::Milliseconds(10200);
  EXPECT_DOUBLE_EQ(window.Sum(now), 1);
  EXPECT_EQ(window.Span(now), absl::Milliseconds(9200));
}

TEST(SlidingWindowTest, ReusedBucketStartsAfresh) {
  SlidingWindow window(kStart, absl::Seconds(2), 2);
  window.Add(kStart, 7);                     // Bucket 0, slot 0.
  window.Add(kStart + absl::Seconds(2), 1);  // Bucket 2, slot 0 again.
  EXPECT_DOUBLE_EQ(window.Sum(kStart + absl::Seconds(2)), 1);
}

TEST(SlidingWindowTest, EmptySpanHasNoRate) {
  SlidingWindow window(kStart);
  EXPECT_DOUBLE_EQ(window.RatePerSecond(kStart), 0);
  EXPECT_DOUBLE_EQ(window.Sum(kStart + absl::Hours(1)), 0);
}

}  // namespace
}  // namespace stoker
