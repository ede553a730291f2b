#ifndef STOKER_COMMON_SLIDING_WINDOW_H_
#define STOKER_COMMON_SLIDING_WINDOW_H_

// Sums of events over the recent past, for "recent" figures that follow a changing load: the
// last ten seconds of data wait, of busy time, of samples produced. Time is passed in (from an
// injected Clock), so tests need no sleeps.

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace stoker {

// The window is split into `buckets` equal buckets; Sum covers the current, partly filled
// bucket and the buckets - 1 before it. Thread-compatible.
class SlidingWindow {
 public:
  // `start` is when counting began: Span never reaches before it.
  // REQUIRES: window > 0, buckets > 0.
  SlidingWindow(absl::Time start, absl::Duration window = absl::Seconds(10), int buckets = 10);

  // Adds `value` at time `now` (REQUIRES: now is not before the latest call's time).
  void Add(absl::Time now, double value);
  // The sum of the values added in the span that ends at `now`.
  double Sum(absl::Time now) const;
  // The time the sum covers: up to the window, less just after `start`.
  absl::Duration Span(absl::Time now) const;
  // Sum / Span in units per second; 0 when the span is empty.
  double RatePerSecond(absl::Time now) const;

 private:
  int64_t BucketOf(absl::Time t) const;

  struct Bucket {
    int64_t id = -1;
    double sum = 0;
  };
  const absl::Time start_;
  const absl::Duration bucket_width_;
  std::vector<Bucket> buckets_;
};

}  // namespace stoker

#endif  // STOKER_COMMON_SLIDING_WINDOW_H_
