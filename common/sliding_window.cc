#include "common/sliding_window.h"

#include <algorithm>

namespace stoker {

SlidingWindow::SlidingWindow(absl::Time start, absl::Duration window, int buckets)
    : start_(start), bucket_width_(window / buckets), buckets_(static_cast<size_t>(buckets)) {}

int64_t SlidingWindow::BucketOf(absl::Time t) const {
  absl::Duration remainder;
  return absl::IDivDuration(std::max(t - start_, absl::ZeroDuration()), bucket_width_, &remainder);
}

void SlidingWindow::Add(absl::Time now, double value) {
  const int64_t id = BucketOf(now);
  Bucket& bucket = buckets_[static_cast<size_t>(id) % buckets_.size()];
  if (bucket.id != id) bucket = Bucket{id, 0};
  bucket.sum += value;
}

double SlidingWindow::Sum(absl::Time now) const {
  const int64_t current = BucketOf(now);
  const int64_t oldest = current - static_cast<int64_t>(buckets_.size()) + 1;
  double sum = 0;
  for (const Bucket& bucket : buckets_) {
    if (bucket.id >= oldest && bucket.id <= current) sum += bucket.sum;
  }
  return sum;
}

absl::Duration SlidingWindow::Span(absl::Time now) const {
  const int64_t oldest =
      std::max<int64_t>(BucketOf(now) - static_cast<int64_t>(buckets_.size()) + 1, 0);
  return std::max(now - (start_ + oldest * bucket_width_), absl::ZeroDuration());
}

double SlidingWindow::RatePerSecond(absl::Time now) const {
  const double seconds = absl::ToDoubleSeconds(Span(now));
  return seconds > 0 ? Sum(now) / seconds : 0;
}

}  // namespace stoker
