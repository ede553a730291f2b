#ifndef STOKER_COORDINATOR_ETCD_COORDINATOR_REPLICA_H_
#define STOKER_COORDINATOR_ETCD_COORDINATOR_REPLICA_H_

// CoordinatorReplica: one of several coordinator processes that share one state in etcd
// (--state=etcd://...; docs/architecture.md, "Replicated coordinators"). It decides when its
// Coordinator may serve, and is the Leadership the server's glue asks on every call.
//
// Life of a replica:
//   1. Start: the state stored in etcd is loaded into the Coordinator (Coordinator::Replay).
//      UNAVAILABLE naming the endpoints when etcd cannot be reached, DATA_LOSS naming the key
//      when what is stored does not parse: the process does not start.
//   2. Standby: one thread follows what the leader appends (EtcdStateStore::Follow) and
//      applies it, so that the state is current; another campaigns (LeaderElection::Campaign).
//      view() is not leading and names the leader: the glue answers UNAVAILABLE with it.
//   3. Leader: on winning, every later write of the store is fenced by the leader key, the
//      records appended since the last one followed are applied (EtcdStateStore::TakeOver),
//      and Coordinator::FinishRecovery treats the rest as a restart does (leases were soft
//      state: leased tasks are pending again; recovered workers get a full worker_timeout).
//      Only then does view() say leading, with the epoch.
//   4. Deposed: when the leader's lease is gone (etcd unreachable past the TTL, the process
//      paused) or etcd refused a fenced write, the replica stops leading at once and calls
//      `on_deposed`. Its memory may hold changes etcd never took, so it must not serve from
//      it again: main.cc re-executes the binary, which comes back as a standby (step 1).
//   Stop (graceful shutdown) resigns at once, so a standby takes over without waiting for the
//   lease to expire.
//
// A standby that fell so far behind that etcd compacted what it needed (Follow's OUT_OF_RANGE)
// is deposed the same way: it reloads.
//
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "coordinator/etcd/etcd_state_store.h"
#include "coordinator/etcd/leader_election.h"
#include "coordinator/leadership.h"

namespace stoker {

class CoordinatorReplica : public Leadership {
 public:
  // All three outlive the replica; `coordinator` was built over `store` and nothing else
  // calls it before view() says leading. `on_deposed` runs once, on the replica's thread,
  // with a reason.
  CoordinatorReplica(Coordinator* coordinator, EtcdStateStore* store, LeaderElection* election,
                     std::function<void(const absl::Status&)> on_deposed);
  ~CoordinatorReplica() override;
  CoordinatorReplica(const CoordinatorReplica&) = delete;
  CoordinatorReplica& operator=(const CoordinatorReplica&) = delete;

  // Step 1, then starts the replica's threads. With `wait_for_etcd` (a replica that stood
  // down and runs again, main.cc), the state is loaded on the replica's thread instead,
  // retried while etcd is unreachable, and Start returns at once: a replica that lost etcd
  // while leading waits for it to return instead of exiting.
  absl::Status Start(bool wait_for_etcd = false);
  LeaderView view() const override;
  // Resigns when leading and joins the threads. Idempotent.
  void Stop();

 private:
  // Loads the stored state into the coordinator, retrying while etcd is unreachable; false
  // when stopped or deposed (another error).
  bool LoadPatiently();
  void StartCampaign();
  // Follows until the campaign is won or Stop; then leads until deposed or Stop.
  void Run();
  // Step 3; an error deposes.
  absl::Status TakeOver(uint64_t epoch);
  void Depose(const absl::Status& why);

  Coordinator* const coordinator_;
  EtcdStateStore* const store_;
  LeaderElection* const election_;
  const std::function<void(const absl::Status&)> on_deposed_;

  mutable absl::Mutex mu_;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;  // taken over and not deposed
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // The campaign's result: the epoch won, or why it ended.
  bool campaign_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::StatusOr<uint64_t> campaign_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread campaign_thread_;  // started by Start or, when waiting for etcd, by run_thread_
  std::thread run_thread_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_COORDINATOR_REPLICA_H_
