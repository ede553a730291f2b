#include "worker/op_time_histograms.h"

#include <algorithm>

namespace stoker {

OpTimeHistograms::Series& OpTimeHistograms::Find(uint32_t position, const std::string& op) {
  for (Series& series : series_) {
    if (series.position == position && series.op == op) return series;
  }
  Series& added = series_.emplace_back();
  added.position = position;
  added.op = op;
  return added;
}

void OpTimeHistograms::Observe(uint32_t position, const std::string& op, double seconds) {
  Series& series = Find(position, op);
  const size_t bucket =
      std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin();
  ++series.counts[bucket];
  series.sum += seconds;
  ++series.count;
}

void OpTimeHistograms::MergeFrom(OpTimeHistograms& other) {
  for (const Series& from : other.series_) {
    Series& into = Find(from.position, from.op);
    for (size_t b = 0; b < into.counts.size(); ++b) into.counts[b] += from.counts[b];
    into.sum += from.sum;
    into.count += from.count;
  }
  other.series_.clear();
}

}  // namespace stoker
