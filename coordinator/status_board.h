#ifndef STOKER_COORDINATOR_STATUS_BOARD_H_
#define STOKER_COORDINATOR_STATUS_BOARD_H_

// The latest figures clients and workers report in their heartbeats (data wait, step time, busy
// fraction, rates), and the status built from them and the cluster state: what stoker-ctl shows
// and what the advisor (coordinator/advisor.h) reads. Soft state: never journaled, rebuilt from
// the next heartbeats after a restart.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "common/tls/principal.h"
#include "coordinator/advisor.h"
#include "coordinator/cluster_state.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/status.pb.h"

namespace stoker {

// Thread-compatible (the Coordinator calls it under its mutex).
class StatusBoard {
 public:
  explicit StatusBoard(AdvisorConfig advisor = AdvisorConfig()) : advisor_(advisor) {}

  void RecordClient(uint64_t job_id, uint32_t rank, const std::string& client_id,
                    const stoker::v1::ClientStats& stats, absl::Time now);
  void RecordWorker(uint64_t worker_id, const stoker::v1::WorkerStats& stats, absl::Time now);
  // The client that last reported for (job, rank) and when; nullopt when none has.
  std::optional<std::pair<std::string, absl::Time>> LastClient(uint64_t job_id,
                                                               uint32_t rank) const;
  // Drops a removed worker's figures.
  void ForgetWorker(uint64_t worker_id);
  // Drops a retired job's client reports.
  void ForgetJob(uint64_t job_id);
  // A worker was removed for missing heartbeats.
  void CountLostWorker() { ++workers_lost_; }

  // Every job of `state` that `scope` sees, with its ranks and advice, and every live worker
  // with its rates of those jobs; the cluster's figures are over what it shows.
  stoker::v1::GetStatusResponse Build(const ClusterState& state, absl::Time now,
                                      const TenantScope& scope = {}) const;

 private:
  struct ClientReport {
    std::string client_id;
    stoker::v1::ClientStats stats;
    absl::Time at;
  };
  struct WorkerReport {
    stoker::v1::WorkerStats stats;
    absl::Time at;
  };

  using ClientKey = std::pair<uint64_t, uint32_t>;  // (job, rank)
  // The reports of one job's ranks, by rank.
  std::vector<std::pair<const ClientKey, ClientReport>> ClientsOf(uint64_t job_id) const;
  stoker::v1::JobStatus BuildJob(const JobRecord& job, const ClusterState& state,
                                 absl::Time now) const;
  Advice AdviseJob(const JobRecord& job, const ClusterState& state) const;
  // The cluster's figures from the rest of `status`.
  stoker::v1::ClusterCost ClusterCostOf(const stoker::v1::GetStatusResponse& status) const;

  const AdvisorConfig advisor_;
  std::map<ClientKey, ClientReport> clients_;
  std::map<uint64_t, WorkerReport> workers_;  // by worker id
  uint64_t workers_lost_ = 0;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_STATUS_BOARD_H_
