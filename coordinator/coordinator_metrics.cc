#include "coordinator/coordinator_metrics.h"

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/metric_family_builder.h"
#include "common/tls/tls_config.h"
#include "coordinator/scale_target.h"

namespace stoker {
namespace {

struct TaskCounts {
  uint64_t pending = 0;
  uint64_t leased = 0;
  uint64_t done = 0;
};

// Per job, over its ranks and epochs: O(ranks with progress) per job, not O(world size).
// A job's labels: its name is unique only within its tenant.
MetricFamilyBuilder::Labels JobLabels(const std::string& tenant, const std::string& name) {
  return {{"job_name", name}, {"tenant", tenant}};
}

MetricFamilyBuilder::Labels WithLabel(MetricFamilyBuilder::Labels labels, const std::string& name,
                                      const std::string& value) {
  labels.emplace_back(name, value);
  return labels;
}

std::vector<std::pair<MetricFamilyBuilder::Labels, TaskCounts>> CountTasks(
    const ClusterState& state) {
  std::vector<std::pair<MetricFamilyBuilder::Labels, TaskCounts>> out;
  for (const JobRecord* job : state.Jobs()) {
    TaskCounts counts;
    const auto progressed = state.ProgressedRankSummaries(job->id);
    for (const auto& [rank, summary] : progressed) {
      const uint64_t done = summary.done_watermark + summary.done_above_watermark;
      counts.done += done;
      counts.leased += summary.leased;
      counts.pending += summary.total - done - summary.leased;
    }
    // The other ranks have all their tasks pending (the product fits: CheckBatchCounts).
    counts.pending += (job->spec.world_size() - progressed.size()) *
                      job->geometry.batches_per_rank * job->spec.epochs();
    out.emplace_back(JobLabels(job->tenant, job->name), counts);
  }
  return out;
}

// The figures of a WorkerCountCost, each a gauge family: "stoker_job_now_<suffix>" for the job
// now and "stoker_job_predicted_<suffix>" per candidate worker count; times `scale` (GPU-hours
// are exported in seconds, Prometheus's base unit).
struct CostFigure {
  const char* suffix;
  const char* help;
  double (stoker::v1::WorkerCountCost::*value)() const;
  double scale = 1;
};
constexpr CostFigure kCostFigures[] = {
    {"samples_per_second", "Samples/s the trainers consume",
     &stoker::v1::WorkerCountCost::samples_per_second},
    {"data_wait_ratio_mean", "Mean fraction of the trainers' time spent waiting for data",
     &stoker::v1::WorkerCountCost::data_wait_fraction},
    {"dollars_per_hour", "Dollars per hour of the job's GPU nodes and workers",
     &stoker::v1::WorkerCountCost::dollars_per_hour},
    {"dollars_per_epoch", "Dollars one epoch costs (0 when unpriced or nothing delivered)",
     &stoker::v1::WorkerCountCost::dollars_per_epoch},
    {"gpu_seconds_lost_per_epoch", "GPU-seconds spent waiting for data per epoch",
     &stoker::v1::WorkerCountCost::gpu_hours_lost_per_epoch, 3600},
    {"samples_per_dollar", "Samples delivered per dollar (0 when unpriced)",
     &stoker::v1::WorkerCountCost::samples_per_dollar},
};

// The advisor's dollars: now, and predicted per worker count (label `workers`).
void AddJobCosts(const stoker::v1::JobStatus& job, MetricFamilyBuilder* m) {
  const stoker::v1::JobAdvice& advice = job.advice();
  if (!advice.measured()) return;
  const MetricFamilyBuilder::Labels labels = JobLabels(job.tenant(), job.name());
  m->Gauge("stoker_job_workers_knee", "Fewest workers with no predicted data wait.",
           advice.knee_workers(), labels);
  m->Gauge("stoker_job_workers_cheapest", "Workers with the fewest predicted dollars per epoch.",
           advice.cheapest_workers(), labels);
  for (const CostFigure& figure : kCostFigures) {
    m->Gauge(absl::StrCat("stoker_job_now_", figure.suffix), absl::StrCat(figure.help, ", now."),
             (advice.now().*figure.value)() * figure.scale, labels);
    for (const stoker::v1::WorkerCountCost& point : advice.predicted()) {
      m->Gauge(absl::StrCat("stoker_job_predicted_", figure.suffix),
               absl::StrCat(figure.help, ", predicted with `workers` workers."),
               (point.*figure.value)() * figure.scale,
               WithLabel(labels, "workers", absl::StrCat(point.workers())));
    }
  }
}

void AddClusterCosts(const stoker::v1::ClusterCost& cluster, MetricFamilyBuilder* m) {
  m->Gauge("stoker_cluster_workers_desired",
           "Workers the running jobs need (what the KEDA external scaler reports for every pool).",
           cluster.workers_desired());
  m->Gauge("stoker_cluster_samples_per_second", "Samples/s the workers deliver to all jobs.",
           cluster.samples_per_second());
  m->Gauge("stoker_cluster_dollars_per_hour", "Dollars per hour of GPU nodes and live workers.",
           cluster.dollars_per_hour());
  m->Gauge("stoker_cluster_samples_per_dollar", "Samples delivered per dollar (0 when unpriced).",
           cluster.samples_per_dollar());
  m->Gauge("stoker_cluster_gpu_seconds_lost_per_second",
           "GPU-seconds spent waiting for data per second (GPU-hours per hour), over every rank.",
           cluster.gpu_hours_lost_per_hour());
}

void AddJobFigures(const stoker::v1::JobStatus& job, MetricFamilyBuilder* m) {
  const MetricFamilyBuilder::Labels labels = JobLabels(job.tenant(), job.name());
  const stoker::v1::JobAdvice& advice = job.advice();
  m->Gauge("stoker_job_workers_desired",
           "Workers the advisor says the job needs (equals the live workers until measured).",
           advice.workers_desired(), labels);
  m->Gauge("stoker_job_demand_samples_per_second",
           "Samples/s the job's trainers would consume if they never waited.",
           advice.demand_samples_per_second(), labels);
  m->Gauge("stoker_job_supply_samples_per_second", "Samples/s the workers deliver to the job.",
           advice.supply_samples_per_second(), labels);
  m->Gauge("stoker_job_finished", "1 once every task of every epoch and rank is done.",
           job.state() == stoker::v1::JOB_STATE_FINISHED ? 1 : 0, labels);
  for (const stoker::v1::RankStatus& rank : job.ranks()) {
    const MetricFamilyBuilder::Labels rank_labels =
        WithLabel(labels, "rank", absl::StrCat(rank.rank()));
    m->Gauge("stoker_job_data_wait_ratio",
             "Fraction of a rank's recent loop time spent waiting for data.",
             rank.stats().data_wait_fraction(), rank_labels);
    m->Gauge("stoker_job_step_seconds", "A rank's recent mean training step, data wait excluded.",
             rank.stats().step_seconds(), rank_labels);
  }
}

// Each tenant's use of its quotas beside the quotas (so that use / quota plots), its refusals,
// and its demand: what the KEDA scaler would report for the tenant, and its trainers' samples/s.
void AddTenantFigures(const std::map<std::string, Coordinator::TenantQuotaUse>& uses,
                      const stoker::v1::GetStatusResponse& status, MetricFamilyBuilder* m) {
  std::map<std::string, double> demand;
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    if (job.state() == stoker::v1::JOB_STATE_FINISHED) continue;
    demand[job.tenant()] += job.advice().demand_samples_per_second();
  }
  for (const auto& [tenant, use] : uses) {
    const MetricFamilyBuilder::Labels labels = {{"tenant", tenant}};
    m->Gauge("stoker_tenant_jobs", "Jobs the tenant has open.", use.usage.jobs, labels);
    m->Gauge("stoker_tenant_ranks", "Ranks of the tenant's open jobs (their world sizes summed).",
             static_cast<double>(use.usage.ranks), labels);
    m->Gauge("stoker_tenant_traced_jobs", "Jobs of the tenant with an open trace window.",
             use.traced_jobs, labels);
    const std::pair<const char*, double> quotas[] = {
        {kQuotaMaxJobs, use.limits.max_jobs},
        {kQuotaMaxRanks, static_cast<double>(use.limits.max_ranks)},
        {kQuotaMaxTraceWindows, use.limits.max_trace_windows},
        {"max_bearer_tokens", use.limits.max_bearer_tokens},
        {"max_prefetch_bytes_per_worker",
         static_cast<double>(use.limits.max_prefetch_bytes_per_worker)}};
    for (const auto& [quota, value] : quotas) {
      m->Gauge("stoker_tenant_quota",
               "The tenant's quota as the tenant policy names it (0: unlimited).", value,
               {{"tenant", tenant}, {"quota", quota}});
    }
    for (const char* quota : {kQuotaMaxJobs, kQuotaMaxRanks, kQuotaMaxTraceWindows}) {
      auto refused = use.refusals.find(quota);
      m->Counter("stoker_tenant_quota_refusals_total",
                 "Requests refused with RESOURCE_EXHAUSTED by one of the tenant's quotas.",
                 refused == use.refusals.end() ? 0 : static_cast<double>(refused->second),
                 {{"tenant", tenant}, {"quota", quota}});
    }
    m->Gauge("stoker_tenant_workers_desired",
             "Workers the tenant's running jobs need (what the KEDA scaler reports for "
             "scalerMetadata.tenant).",
             WorkersWanted(status, ScaleScope{"", "", tenant}), labels);
    m->Gauge("stoker_tenant_demand_samples_per_second",
             "Samples/s the tenant's running jobs' trainers would consume if they never waited.",
             demand[tenant], labels);
  }
}

}  // namespace

std::vector<prometheus::MetricFamily> CoordinatorMetrics::Collect() const {
  MetricFamilyBuilder m;
  const LeaderView leader = leadership_->view();
  m.Gauge("stoker_coordinator_leader",
          "1 while this coordinator serves (the leader of replicated coordinators, or the only "
          "one); 0 for a standby.",
          leader.leading ? 1 : 0);
  m.Gauge("stoker_coordinator_epoch",
          "The epoch this coordinator leads under (the leader key's create revision in etcd); "
          "0 for a standby and for a coordinator without election.",
          static_cast<double>(leader.leading ? leader.epoch : 0));
  if (!leader.leading) return m.Take();
  const stoker::v1::GetStatusResponse status = coordinator_->GetStatus();
  m.Gauge("stoker_coordinator_workers", "Registered workers by state.", status.workers_size(),
          {{"state", "live"}});
  const auto [tasks, requeued] = coordinator_->InspectState([](const ClusterState& state) {
    return std::make_pair(CountTasks(state), state.leases_requeued());
  });
  for (const auto& [job, counts] : tasks) {
    const char* const help = "Tasks (batches of all epochs and ranks) by state.";
    m.Gauge("stoker_coordinator_tasks", help, counts.pending, WithLabel(job, "state", "pending"));
    m.Gauge("stoker_coordinator_tasks", help, counts.leased, WithLabel(job, "state", "leased"));
    m.Gauge("stoker_coordinator_tasks", help, counts.done, WithLabel(job, "state", "done"));
  }
  m.Counter("stoker_coordinator_workers_lost_total",
            "Workers removed because they missed heartbeats for longer than the timeout.",
            static_cast<double>(status.workers_lost()));
  m.Counter("stoker_coordinator_leases_reassigned_total",
            "Leases returned to pending because they expired or their worker was lost.", requeued);
  if (const std::optional<StateStore::Stats> journal = coordinator_->store_stats()) {
    m.Gauge("stoker_coordinator_journal_bytes", "Bytes in the journal file (since compaction).",
            static_cast<double>(journal->bytes_stored));
    m.Counter("stoker_coordinator_journal_written_bytes_total", "Bytes appended to the journal.",
              static_cast<double>(journal->bytes_written_total));
    m.Gauge("stoker_coordinator_journal_failed",
            "1 once a journal write or fsync failed: the coordinator accepts no changes and "
            "reports NOT_SERVING until restarted.",
            journal->failed ? 1 : 0);
    m.Histogram("stoker_coordinator_journal_sync_seconds",
                "Seconds one group commit took (the journal's write and fdatasync, or etcd's "
                "transaction with --state).",
                journal->sync_seconds);
    m.Gauge("stoker_coordinator_store_quota_exhausted",
            "1 while the state store's backend refuses writes for space (etcd's quota, its "
            "NOSPACE alarm); the records stay queued.",
            journal->quota_exhausted ? 1 : 0);
    m.Counter("stoker_coordinator_store_quota_refusals_total",
              "Writes the state store's backend refused for space.",
              static_cast<double>(journal->quota_refusals_total));
  }
  for (const auto& [method, histogram] : latencies_->Snapshot()) {
    m.Histogram("stoker_coordinator_rpc_seconds",
                "Seconds from a call's arrival at its handler to its reply (queueing for a thread "
                "and the lock, the work, the journal wait), by RPC method.",
                histogram, {{"method", method}});
  }
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    AddJobFigures(job, &m);
    AddJobCosts(job, &m);
  }
  AddClusterCosts(status.cluster(), &m);
  AddTenantFigures(coordinator_->TenantQuotaUses(), status, &m);
  AddRpcDenialMetrics(&m);
  return m.Take();
}

}  // namespace stoker
