#include "coordinator/status_board.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "coordinator/scale_target.h"

namespace stoker {
namespace {

void CostToProto(const CostPoint& point, stoker::v1::WorkerCountCost* out) {
  out->set_workers(point.workers);
  out->set_samples_per_second(point.samples_per_second);
  out->set_data_wait_fraction(point.data_wait_fraction);
  out->set_dollars_per_hour(point.dollars_per_hour);
  out->set_epoch_seconds(point.epoch_seconds);
  out->set_dollars_per_epoch(point.dollars_per_epoch);
  out->set_gpu_hours_lost_per_epoch(point.gpu_hours_lost_per_epoch);
  out->set_samples_per_dollar(point.samples_per_dollar);
}

void AdviceToProto(const Advice& advice, stoker::v1::JobAdvice* proto) {
  proto->set_measured(advice.measured);
  proto->set_workers_now(advice.workers_now);
  proto->set_workers_desired(advice.workers_desired);
  proto->set_demand_samples_per_second(advice.demand_samples_per_second);
  proto->set_supply_samples_per_second(advice.supply_samples_per_second);
  proto->set_explanation(advice.explanation);
  if (!advice.measured) return;
  CostToProto(advice.cost.now, proto->mutable_now());
  for (const CostPoint& point : advice.cost.by_workers) CostToProto(point, proto->add_predicted());
  proto->set_knee_workers(advice.cost.knee_workers);
  proto->set_cheapest_workers(advice.cost.cheapest_workers);
}

double JobRateOf(const stoker::v1::WorkerStats& stats, uint64_t job_id) {
  for (const stoker::v1::JobRate& rate : stats.job_rates()) {
    if (rate.job_id() == job_id) return rate.samples_per_second();
  }
  return 0;
}

}  // namespace

void StatusBoard::RecordClient(uint64_t job_id, uint32_t rank, const std::string& client_id,
                               const stoker::v1::ClientStats& stats, absl::Time now) {
  clients_[{job_id, rank}] = ClientReport{client_id, stats, now};
}

std::optional<std::pair<std::string, absl::Time>> StatusBoard::LastClient(uint64_t job_id,
                                                                          uint32_t rank) const {
  const auto it = clients_.find({job_id, rank});
  if (it == clients_.end()) return std::nullopt;
  return std::make_pair(it->second.client_id, it->second.at);
}

void StatusBoard::RecordWorker(uint64_t worker_id, const stoker::v1::WorkerStats& stats,
                               absl::Time now) {
  workers_[worker_id] = WorkerReport{stats, now};
}

void StatusBoard::ForgetWorker(uint64_t worker_id) { workers_.erase(worker_id); }

void StatusBoard::ForgetJob(uint64_t job_id) {
  clients_.erase(clients_.lower_bound({job_id, 0}), clients_.lower_bound({job_id + 1, 0}));
}

std::vector<std::pair<const StatusBoard::ClientKey, StatusBoard::ClientReport>>
StatusBoard::ClientsOf(uint64_t job_id) const {
  return {clients_.lower_bound({job_id, 0}), clients_.lower_bound({job_id + 1, 0})};
}

Advice StatusBoard::AdviseJob(const JobRecord& job, const ClusterState& state) const {
  AdvisorInput input;
  input.batch_size = job.spec.batch_size();
  input.samples_per_epoch =
      uint64_t{job.spec.world_size()} * job.geometry.batches_per_rank * job.spec.batch_size();
  for (const auto& [key, report] : ClientsOf(job.id)) {
    input.ranks.push_back(
        RankDemand{key.second, report.stats.data_wait_fraction(), report.stats.step_seconds()});
  }
  // Every live worker serves every job whose clients stream from it.
  for (const WorkerRecord* worker : state.Workers()) {
    WorkerSupply supply{worker->id, 0, 0, worker->pool};
    if (auto it = workers_.find(worker->id); it != workers_.end()) {
      supply.samples_per_second = JobRateOf(it->second.stats, job.id);
      for (const stoker::v1::JobRate& rate : it->second.stats.job_rates()) {
        // Bounded by the advisor; a NaN or negative one adds nothing here.
        if (rate.samples_per_second() > 0) {
          supply.all_jobs_samples_per_second += rate.samples_per_second();
        }
      }
      supply.busy_fraction = it->second.stats.busy_fraction();
      supply.occupied_fraction = it->second.stats.occupied_fraction();
      supply.process_cpu_fraction = it->second.stats.process_cpu_fraction();
    }
    input.workers.push_back(supply);
  }
  return AdviseWorkers(input, advisor_);
}

stoker::v1::JobStatus StatusBoard::BuildJob(const JobRecord& job, const ClusterState& state,
                                            absl::Time now) const {
  stoker::v1::JobStatus out;
  out.set_job_id(job.id);
  out.set_name(job.name);
  out.set_tenant(job.tenant);
  out.set_state(state.JobFinished(job.id) ? stoker::v1::JOB_STATE_FINISHED
                                          : stoker::v1::JOB_STATE_RUNNING);
  out.set_batch_size(job.spec.batch_size());
  out.set_batches_per_epoch_per_rank(job.geometry.batches_per_rank);
  out.set_epochs(job.spec.epochs());
  for (const auto& [key, report] : ClientsOf(job.id)) {
    stoker::v1::RankStatus* rank = out.add_ranks();
    rank->set_rank(key.second);
    rank->set_client_id(report.client_id);
    *rank->mutable_stats() = report.stats;
    rank->set_last_report_age_ms(absl::ToInt64Milliseconds(now - report.at));
  }
  AdviceToProto(AdviseJob(job, state), out.mutable_advice());
  return out;
}

stoker::v1::ClusterCost StatusBoard::ClusterCostOf(
    const stoker::v1::GetStatusResponse& status) const {
  stoker::v1::ClusterCost cluster;
  cluster.set_workers_now(static_cast<uint32_t>(status.workers_size()));
  cluster.set_workers_desired(WorkersWanted(status, ScaleScope()));
  double dollars_per_hour = 0;
  for (const stoker::v1::WorkerStatus& worker : status.workers()) {
    dollars_per_hour += advisor_.prices.WorkerDollarsPerHour(worker.info().pool());
  }
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    cluster.set_samples_per_second(cluster.samples_per_second() +
                                   job.advice().supply_samples_per_second());
    for (const stoker::v1::RankStatus& rank : job.ranks()) {
      dollars_per_hour += advisor_.prices.gpu_node_dollars_per_hour;
      // Bounded like the advisor's input: a peer's NaN counts as no wait.
      const double wait = rank.stats().data_wait_fraction();
      cluster.set_gpu_hours_lost_per_hour(cluster.gpu_hours_lost_per_hour() +
                                          (wait > 0 ? std::min(wait, 1.0) : 0));
    }
  }
  cluster.set_dollars_per_hour(dollars_per_hour);
  if (dollars_per_hour > 0) {
    cluster.set_samples_per_dollar(cluster.samples_per_second() * 3600 / dollars_per_hour);
  }
  return cluster;
}

stoker::v1::GetStatusResponse StatusBoard::Build(const ClusterState& state, absl::Time now,
                                                 const TenantScope& scope) const {
  stoker::v1::GetStatusResponse response;
  response.set_workers_lost(workers_lost_);
  absl::flat_hash_set<uint64_t> shown;
  for (const JobRecord* job : state.Jobs()) {
    if (!scope.Sees(job->tenant)) continue;
    *response.add_jobs() = BuildJob(*job, state, now);
    shown.insert(job->id);
  }
  for (const WorkerRecord* worker : state.Workers()) {
    stoker::v1::WorkerStatus* out = response.add_workers();
    out->mutable_info()->set_worker_id(worker->id);
    out->mutable_info()->set_address(worker->address);
    out->mutable_info()->set_cores(worker->cores);
    out->mutable_info()->set_pool(worker->pool);
    out->set_leases_held(static_cast<uint32_t>(state.LeasesOf(worker->id).size()));
    out->set_last_heartbeat_age_ms(absl::ToUnixMillis(now) - worker->last_heartbeat_unix_ms);
    if (auto it = workers_.find(worker->id); it != workers_.end()) {
      out->set_busy_fraction(it->second.stats.busy_fraction());
      for (const stoker::v1::JobRate& rate : it->second.stats.job_rates()) {
        if (shown.contains(rate.job_id())) *out->add_job_rates() = rate;
      }
    }
  }
  *response.mutable_cluster() = ClusterCostOf(response);
  return response;
}

}  // namespace stoker
