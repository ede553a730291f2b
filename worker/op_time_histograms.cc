#include "worker/op_time_histograms.h"

namespace stoker {

const std::vector<double>& OpTimeHistograms::Bounds() {
  static const std::vector<double> bounds = {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3,
                                             1e-2, 3e-2, 1e-1, 3e-1, 1.0};
  return bounds;
}

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
  Find(position, op).seconds.Observe(seconds);
}

void OpTimeHistograms::MergeFrom(OpTimeHistograms& other) {
  for (const Series& from : other.series_) Find(from.position, from.op).seconds.Merge(from.seconds);
  other.series_.clear();
}

}  // namespace stoker
