#include "common/metric_family_builder.h"

#include <limits>

namespace stoker {

prometheus::ClientMetric& MetricFamilyBuilder::Add(const std::string& name, const std::string& help,
                                                   prometheus::MetricType type,
                                                   const Labels& labels) {
  prometheus::MetricFamily* family = nullptr;
  for (prometheus::MetricFamily& existing : families_) {
    if (existing.name == name) family = &existing;
  }
  if (family == nullptr) {
    families_.push_back(prometheus::MetricFamily{name, help, type, {}});
    family = &families_.back();
  }
  prometheus::ClientMetric& metric = family->metric.emplace_back();
  for (const auto& [key, value] : labels) metric.label.push_back({key, value});
  return metric;
}

void MetricFamilyBuilder::Gauge(const std::string& name, const std::string& help, double value,
                                const Labels& labels) {
  Add(name, help, prometheus::MetricType::Gauge, labels).gauge.value = value;
}

void MetricFamilyBuilder::Counter(const std::string& name, const std::string& help, double value,
                                  const Labels& labels) {
  Add(name, help, prometheus::MetricType::Counter, labels).counter.value = value;
}

void MetricFamilyBuilder::Histogram(const std::string& name, const std::string& help,
                                    const stoker::Histogram& data, const Labels& labels) {
  prometheus::ClientMetric::Histogram& histogram =
      Add(name, help, prometheus::MetricType::Histogram, labels).histogram;
  uint64_t cumulative = 0;
  for (size_t b = 0; b < data.counts().size(); ++b) {
    cumulative += data.counts()[b];
    const double bound =
        b < data.bounds().size() ? data.bounds()[b] : std::numeric_limits<double>::infinity();
    histogram.bucket.push_back({cumulative, bound});
  }
  histogram.sample_count = data.count();
  histogram.sample_sum = data.sum();
}

}  // namespace stoker
