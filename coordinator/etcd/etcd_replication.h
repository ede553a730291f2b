#ifndef STOKER_COORDINATOR_ETCD_ETCD_REPLICATION_H_
#define STOKER_COORDINATOR_ETCD_ETCD_REPLICATION_H_

// EtcdReplication: what a coordinator started with --state=etcd://... holds beside its
// Coordinator: the etcd client, the state store in etcd, the leader election and the replica
// that runs them (coordinator_replica.h). CoordinatorServer builds the Coordinator over store()
// and hands itself this object as the Leadership its glue asks.
//
//   ASSIGN_OR_RETURN(auto replication, EtcdReplication::Connect(config, clock));
//   Coordinator coordinator(config, clock, replication->store(), ...);
//   ... bind the port ...
//   RETURN_IF_ERROR(replication->Start(&coordinator, "10.0.0.5:7070", on_deposed));
//   ...
//   replication->Stop();  // resigns when leading
//
// Thread-safe.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/etcd/coordinator_replica.h"
#include "coordinator/etcd/etcd_client.h"
#include "coordinator/etcd/etcd_state_store.h"
#include "coordinator/etcd/leader_election.h"
#include "coordinator/leadership.h"

namespace stoker {

class EtcdReplication : public Leadership {
 public:
  // The key under the state's prefix that the replicas campaign for.
  static constexpr char kLeaderKey[] = "leader";

  // A client of config.state's members (REQUIRES: config.Validate() is OK and config.state is
  // set); nothing is read yet. INVALID_ARGUMENT naming the flag for an unreadable TLS file.
  static absl::StatusOr<std::unique_ptr<EtcdReplication>> Connect(const CoordinatorConfig& config,
                                                                  Clock* clock);
  ~EtcdReplication() override;

  StateStore* store() { return &store_; }

  // Loads the stored state into `coordinator` (built over store()) and starts following and
  // campaigning as `self` (host:port clients reach this replica at). UNAVAILABLE naming the
  // endpoints when etcd does not answer; DATA_LOSS naming the key of a stored record that does
  // not parse. `on_deposed` and `wait_for_etcd`: see CoordinatorReplica.
  absl::Status Start(Coordinator* coordinator, const std::string& self,
                     std::function<void(const absl::Status&)> on_deposed,
                     bool wait_for_etcd = false);

  // Not leading until Start; then the replica's view.
  LeaderView view() const override;

  // Resigns when leading and stops following and campaigning. Idempotent.
  void Stop();

 private:
  EtcdReplication(absl::Duration lease_ttl, Clock* clock, EtcdTarget target,
                  std::unique_ptr<EtcdClient> client);

  const absl::Duration lease_ttl_;
  Clock* const clock_;
  const EtcdTarget target_;
  const std::unique_ptr<EtcdClient> client_;
  EtcdStateStore store_;
  std::unique_ptr<LeaderElection> election_;
  mutable absl::Mutex mu_;
  std::unique_ptr<CoordinatorReplica> replica_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_ETCD_REPLICATION_H_
