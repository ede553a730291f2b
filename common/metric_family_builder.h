#ifndef STOKER_COMMON_METRIC_FAMILY_BUILDER_H_
#define STOKER_COMMON_METRIC_FAMILY_BUILDER_H_

// Prometheus metrics are read from the logic classes when scraped: each component has a
// prometheus::Collectable whose Collect() builds its families with MetricFamilyBuilder, so the
// hot paths carry no metric objects. Names start with stoker_ and carry their unit
// (docs/metrics.md lists every one).

#include <string>
#include <utility>
#include <vector>

#include "common/histogram.h"
#include "prometheus/metric_family.h"

namespace stoker {

// Accumulates samples into metric families (one per name, in first-use order). Thread-compatible.
class MetricFamilyBuilder {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  void Gauge(const std::string& name, const std::string& help, double value,
             const Labels& labels = {});
  void Counter(const std::string& name, const std::string& help, double value,
               const Labels& labels = {});
  void Histogram(const std::string& name, const std::string& help, const stoker::Histogram& data,
                 const Labels& labels = {});
  std::vector<prometheus::MetricFamily> Take() { return std::move(families_); }

 private:
  prometheus::ClientMetric& Add(const std::string& name, const std::string& help,
                                prometheus::MetricType type, const Labels& labels);
  std::vector<prometheus::MetricFamily> families_;
};

}  // namespace stoker

#endif  // STOKER_COMMON_METRIC_FAMILY_BUILDER_H_
