#include "common/histogram.h"

#include <algorithm>

namespace stoker {

void Histogram::Observe(double value) {
  ++counts_[std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin()];
  sum_ += value;
  ++count_;
}

void Histogram::Merge(const Histogram& other) {
  for (size_t b = 0; b < counts_.size() && b < other.counts_.size(); ++b) {
    counts_[b] += other.counts_[b];
  }
  sum_ += other.sum_;
  count_ += other.count_;
}

}  // namespace stoker
