#ifndef STOKER_TRAINER_CLIENT_LOADER_METRICS_H_
#define STOKER_TRAINER_CLIENT_LOADER_METRICS_H_

// The trainer client's Prometheus metrics (docs/metrics.md), read from the loader when scraped.
// The library serves nothing itself: Loader::metrics() hands this collectable to the host
// program, which registers it with its own prometheus::Exposer.

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"

namespace stoker {

class LoaderImpl;

// Thread-safe. Collects nothing once Detach()ed (the loader is going away).
class LoaderMetrics : public prometheus::Collectable {
 public:
  LoaderMetrics(const LoaderImpl* loader, std::string job, uint32_t rank)
      : loader_(loader), job_(std::move(job)), rank_(rank) {}
  std::vector<prometheus::MetricFamily> Collect() const override;
  void Detach();

 private:
  mutable absl::Mutex mu_;
  const LoaderImpl* loader_ ABSL_GUARDED_BY(mu_);
  const std::string job_;
  const uint32_t rank_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_METRICS_H_
