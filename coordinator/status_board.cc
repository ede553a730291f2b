#include "coordinator/status_board.h"

namespace stoker {
namespace {

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
  for (const auto& [key, report] : ClientsOf(job.id)) {
    input.ranks.push_back(
        RankDemand{key.second, report.stats.data_wait_fraction(), report.stats.step_seconds()});
  }
  // Every live worker serves every job whose clients stream from it.
  for (const WorkerRecord* worker : state.Workers()) {
    WorkerSupply supply{worker->id, 0, 0};
    if (auto it = workers_.find(worker->id); it != workers_.end()) {
      supply.samples_per_second = JobRateOf(it->second.stats, job.id);
      supply.busy_fraction = it->second.stats.busy_fraction();
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
  const Advice advice = AdviseJob(job, state);
  stoker::v1::JobAdvice* proto = out.mutable_advice();
  proto->set_measured(advice.measured);
  proto->set_workers_now(advice.workers_now);
  proto->set_workers_desired(advice.workers_desired);
  proto->set_demand_samples_per_second(advice.demand_samples_per_second);
  proto->set_supply_samples_per_second(advice.supply_samples_per_second);
  proto->set_explanation(advice.explanation);
  return out;
}

stoker::v1::GetStatusResponse StatusBoard::Build(const ClusterState& state, absl::Time now) const {
  stoker::v1::GetStatusResponse response;
  response.set_workers_lost(workers_lost_);
  for (const JobRecord* job : state.Jobs()) *response.add_jobs() = BuildJob(*job, state, now);
  for (const WorkerRecord* worker : state.Workers()) {
    stoker::v1::WorkerStatus* out = response.add_workers();
    out->mutable_info()->set_worker_id(worker->id);
    out->mutable_info()->set_address(worker->address);
    out->mutable_info()->set_cores(worker->cores);
    out->set_leases_held(static_cast<uint32_t>(state.LeasesOf(worker->id).size()));
    out->set_last_heartbeat_age_ms(absl::ToUnixMillis(now) - worker->last_heartbeat_unix_ms);
    if (auto it = workers_.find(worker->id); it != workers_.end()) {
      out->set_busy_fraction(it->second.stats.busy_fraction());
      *out->mutable_job_rates() = it->second.stats.job_rates();
    }
  }
  return response;
}

}  // namespace stoker
