#ifndef STOKER_COMMON_HISTOGRAM_H_
#define STOKER_COMMON_HISTOGRAM_H_

// The data of a Prometheus histogram: observation counts per bucket (upper bounds ascending,
// inclusive, then +Inf), their sum and number. Exported with MetricFamilyBuilder::Histogram.

#include <cstdint>
#include <vector>

namespace stoker {

// Thread-compatible.
class Histogram {
 public:
  // REQUIRES: `bounds` ascending.
  explicit Histogram(std::vector<double> bounds)
      : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

  void Observe(double value);
  // Adds `other`'s observations. REQUIRES: the same bounds.
  void Merge(const Histogram& other);

  const std::vector<double>& bounds() const { return bounds_; }
  // One per bucket, not cumulative; the last is +Inf.
  const std::vector<uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace stoker

#endif  // STOKER_COMMON_HISTOGRAM_H_
