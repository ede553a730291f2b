#include "worker/worker_metrics.h"

#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/metric_family_builder.h"
#include "common/tls/tls_config.h"

namespace stoker {
namespace {

// The decoded cache's families (docs/metrics.md), when the worker has one.
void AddDecodedCacheMetrics(const DecodedCacheStats& stats, MetricFamilyBuilder* m) {
  for (const auto& [name, help, value] :
       {std::tuple<const char*, const char*, uint64_t>{
            "hits", "Samples whose decoded prefix came from the decoded cache.", stats.hits},
        {"misses", "Lookups of the decoded cache that found nothing usable (decoded instead).",
         stats.misses},
        {"insertions", "Decoded samples kept in the decoded cache.", stats.insertions},
        {"evictions", "Decoded samples evicted from the decoded cache to make room.",
         stats.evictions},
        {"checksum_failures",
         "Decoded cache entries whose crc32c did not match on a hit: dropped, decoded again.",
         stats.checksum_failures},
        {"rejections",
         "Decoded samples offered to the decoded cache and not kept (too cheap to decode for "
         "their bytes, larger than a shard's budget, or blocks still held by a hit's copy).",
         stats.rejections}}) {
    m->Counter(absl::StrCat("stoker_worker_decoded_cache_", name, "_total"), help,
               static_cast<double>(value));
  }
  m->Counter("stoker_worker_decoded_cache_saved_seconds_total",
             "Prefix (decode and deterministic ops) CPU seconds not spent again: the seconds "
             "recorded with each entry, summed over its hits.",
             stats.saved_seconds);
  m->Gauge("stoker_worker_decoded_cache_bytes",
           "Bytes the decoded cache's entries hold: their 16 KiB blocks plus a fixed overhead "
           "per entry.",
           static_cast<double>(stats.bytes));
  m->Gauge("stoker_worker_decoded_cache_mapped_bytes",
           "Bytes of blocks the decoded cache has mapped, held or free (never returned).",
           static_cast<double>(stats.mapped_bytes));
  m->Gauge("stoker_worker_decoded_cache_entries", "Decoded samples in the decoded cache.",
           static_cast<double>(stats.entries));
}

}  // namespace

std::vector<prometheus::MetricFamily> WorkerMetrics::Collect() const {
  const stoker::v1::WorkerStats stats = worker_->stats();
  MetricFamilyBuilder m;
  m.Counter("stoker_worker_batches_produced_total", "Batches produced since the worker started.",
            static_cast<double>(stats.batches_produced()));
  m.Counter("stoker_worker_samples_produced_total", "Samples produced since the worker started.",
            static_cast<double>(stats.samples_produced()));
  m.Gauge("stoker_worker_busy_ratio",
          "CPU time the producer threads spent on tasks / their wall time, last 10 seconds.",
          stats.busy_fraction());
  m.Gauge("stoker_worker_occupied_ratio",
          "Wall time the producer threads held a task (running or waiting for a core) / their "
          "wall time, last 10 seconds.",
          stats.occupied_fraction());
  m.Gauge("stoker_worker_process_cpu_ratio",
          "The process's CPU time / the CPUs it may use, last 10 seconds (0: not measured).",
          stats.process_cpu_fraction());
  m.Gauge("stoker_worker_open_streams", "Client streams open.", stats.open_streams());
  for (const stoker::v1::JobRate& rate : stats.job_rates()) {
    m.Gauge("stoker_worker_job_samples_per_second",
            "Samples produced per second for a job over the last 10 seconds.",
            rate.samples_per_second(), {{"job_id", absl::StrCat(rate.job_id())}});
  }
  for (const auto& [tenant, seconds] : worker_->tenant_busy_seconds()) {
    m.Counter("stoker_worker_tenant_busy_seconds_total",
              "Producer thread seconds spent on the tenant's batches (from taking a task to "
              "handing its batch on).",
              seconds, {{"tenant", tenant}});
  }
  for (const auto& [tenant, share] : worker_->tenant_shares()) {
    m.Gauge("stoker_worker_tenant_weight",
            "The tenant's weight in this worker's fair share of producer time (from the "
            "coordinator's tenant policy), for tenants with jobs here.",
            share.weight, {{"tenant", tenant}});
  }
  const StreamTraffic traffic = worker_->traffic();
  m.Gauge("stoker_worker_queued_bytes",
          "Batch payload bytes produced and waiting in the streams' send queues.",
          static_cast<double>(traffic.queued_bytes));
  m.Counter("stoker_worker_sent_bytes_total", "Batch payload bytes written to client streams.",
            static_cast<double>(traffic.sent_bytes_total));
  for (const auto& [codec, bytes] : traffic.payload_bytes_total) {
    for (const auto& [form, value] : {std::pair{"raw", bytes.raw}, std::pair{"wire", bytes.wire}}) {
      m.Counter("stoker_worker_payload_bytes_total",
                "Batch payload bytes handed to client streams, by codec, before (raw) and after "
                "(wire) compression.",
                static_cast<double>(value), {{"codec", codec}, {"form", form}});
    }
  }
  for (size_t r = 0; r < BadSampleCounters::kReasons; ++r) {
    const auto reason = static_cast<BadSampleReason>(r);
    m.Counter("stoker_samples_skipped_total",
              "Samples replaced because they could not be read or decoded, by reason.",
              static_cast<double>(worker_->bad_samples().count(reason)),
              {{"reason", std::string(BadSampleReasonName(reason))}});
  }
  const OpTimeHistograms op_times = worker_->op_times();
  for (const OpTimeHistograms::Series& series : op_times.series()) {
    m.Histogram("stoker_worker_op_seconds", "Seconds one pipeline op took on one sample.",
                series.seconds, {{"op", series.op}, {"position", absl::StrCat(series.position)}});
  }
  for (size_t r = 0; r < kProtocolErrorReasons; ++r) {
    const auto reason = static_cast<ProtocolError>(r);
    m.Counter("stoker_worker_protocol_errors_total",
              "Client streams ended for breaking the protocol, by reason (ack_unsent: an ack "
              "of a task the stream was not sent or acknowledged already; bad_message: "
              "unparsable, no open first, or an invalid set_compression).",
              static_cast<double>(worker_->protocol_errors(reason)),
              {{"reason", ProtocolErrorName(reason)}});
  }
  m.Counter("stoker_worker_stale_epoch_responses_total",
            "Coordinator responses refused because their epoch was older than one already seen "
            "(a deposed leader's; docs/decisions/0075-follow-the-leader.md).",
            static_cast<double>(worker_->stale_epoch_responses()));
  if (const std::optional<DecodedCacheStats> cache = worker_->decoded_cache_stats()) {
    AddDecodedCacheMetrics(*cache, &m);
    // Per job, for the jobs held only (a retired job's series go with it): bounded.
    for (const std::shared_ptr<const JobContext>& job : worker_->jobs()) {
      if (!job->uses_decoded_cache()) continue;
      const MetricFamilyBuilder::Labels labels{{"job_id", absl::StrCat(job->job_id())}};
      m.Counter("stoker_worker_job_decoded_cache_hits_total",
                "A held job's samples whose decoded prefix came from the decoded cache.",
                static_cast<double>(job->decoded_hits()), labels);
      m.Counter("stoker_worker_job_decoded_cache_misses_total",
                "A held job's decoded cache lookups that found nothing usable.",
                static_cast<double>(job->decoded_misses()), labels);
      const DecodedCacheProbe* probe = job->decoded_cache_probe();
      if (const std::optional<DecodedCacheChoice> choice =
              probe != nullptr ? probe->choice() : std::nullopt) {
        m.Gauge("stoker_worker_job_decoded_cache_chosen",
                "A held AUTO job's choice on this worker, once its first samples were timed both "
                "ways: 1 the decoded cache, 0 the pipeline without it.",
                choice->use ? 1 : 0, labels);
      }
    }
  }
  AddRpcDenialMetrics(&m);
  return m.Take();
}

}  // namespace stoker
