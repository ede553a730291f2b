#include "trainer_client/loader_metrics.h"

#include "absl/strings/str_cat.h"
#include "common/metric_family_builder.h"
#include "trainer_client/loader_impl.h"

namespace stoker {

void LoaderMetrics::Detach() {
  absl::MutexLock lock(&mu_);
  loader_ = nullptr;
}

std::vector<prometheus::MetricFamily> LoaderMetrics::Collect() const {
  absl::MutexLock lock(&mu_);
  if (loader_ == nullptr) return {};
  const LoaderStats stats = loader_->stats();
  const std::string rank = absl::StrCat(rank_);
  const MetricFamilyBuilder::Labels labels = {{"job_name", job_}, {"rank", rank}};
  MetricFamilyBuilder m;
  for (const WorkerReceiveStats& worker : stats.workers) {
    const MetricFamilyBuilder::Labels by_worker = {
        {"job_name", job_}, {"rank", rank}, {"worker", worker.address}};
    m.Counter("stoker_client_batches_received_total",
              "Batches received from a worker (duplicates excluded).",
              static_cast<double>(worker.batches), by_worker);
    m.Counter("stoker_client_received_bytes_total", "Tensor bytes received from a worker.",
              static_cast<double>(worker.bytes), by_worker);
    m.Counter("stoker_client_received_wire_bytes_total",
              "Payload bytes received from a worker as sent (compressed when the stream "
              "compresses; equal to the tensor bytes when raw).",
              static_cast<double>(worker.wire_bytes), by_worker);
  }
  m.Counter("stoker_client_corrupt_payloads_total",
            "Compressed payloads that did not decode (each ended its stream; refetched).",
            static_cast<double>(stats.corrupt_payloads), labels);
  m.Counter("stoker_client_decode_seconds_total", "CPU seconds spent decompressing payloads.",
            stats.decode_seconds, labels);
  m.Counter("stoker_client_batches_delivered_total", "Batches delivered: returned by Next().",
            static_cast<double>(stats.batches_delivered), labels);
  m.Counter("stoker_client_data_wait_seconds_total",
            "Seconds the training loop spent blocked in Next() waiting for data.",
            stats.wait_seconds, labels);
  m.Counter("stoker_client_step_seconds_total",
            "Seconds the training loop spent between Next() calls (its steps).", stats.step_seconds,
            labels);
  m.Counter("stoker_client_duplicates_dropped_total",
            "Batches dropped because the task had already arrived.",
            static_cast<double>(stats.duplicates_dropped), labels);
  m.Counter("stoker_client_stream_failures_total", "Worker streams that broke.",
            static_cast<double>(stats.stream_failures), labels);
  m.Gauge("stoker_client_failed", "1 once the loader stopped on an error (Next() returns it).",
          stats.failed ? 1 : 0, labels);
  m.Gauge("stoker_client_budget_bytes", "The prefetch byte budget (at least a batch per stream).",
          static_cast<double>(stats.budget_bytes), labels);
  m.Gauge("stoker_client_committed_bytes_max",
          "Most bytes ever committed at once: credit out at workers + batches buffered.",
          static_cast<double>(stats.max_committed_bytes), labels);
  m.Counter("stoker_client_overdue_reported_total",
            "Overdue tasks reported to the coordinator for hedging (backup leases).",
            static_cast<double>(stats.overdue_reported), labels);
  return m.Take();
}

}  // namespace stoker
