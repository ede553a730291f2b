#ifndef STOKER_COORDINATOR_ETCD_LEADER_ELECTION_H_
#define STOKER_COORDINATOR_ETCD_LEADER_ELECTION_H_

// Leader election of replicated coordinators on etcd (docs/decisions/
// 0074-leader-election-and-fencing.md). Replicas campaign for one key (PREFIX + "leader") bound
// to a lease of `ttl`: the one whose transaction creates it leads, and the key's create revision
// is its epoch, which grows with every new leader. Every write of the leader carries Fence(),
// so a deposed leader's writes fail their compare.
//
// While leading, a thread renews the lease every ttl/3 (every ttl/12 after a failed renewal).
// view() says leading only while the clock is before (send time of the last acknowledged renewal) +
// ttl: etcd expires the lease no earlier than that, so a process paused past its lease (SIGSTOP, a
// long GC-like stall) knows on waking, without asking etcd, that it may no longer lead.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/etcd/etcd_client.h"
#include "coordinator/leadership.h"

namespace stoker {

// Thread-safe. Campaign from one thread at a time.
class LeaderElection : public Leadership {
 public:
  // `etcd` and `clock` outlive this. `my_address` is the host:port other replicas name to
  // clients; `ttl` is rounded up to whole seconds for etcd, the local bound keeps `ttl`.
  LeaderElection(EtcdClient* etcd, std::string key, std::string my_address, absl::Duration ttl,
                 Clock* clock);
  // Stop()s.
  ~LeaderElection() override;

  // Blocks until this process holds the key and returns its epoch, or until Stop() (CANCELLED).
  // etcd errors that a retry may cure (UNAVAILABLE, DEADLINE_EXCEEDED, an expired lease, a
  // compacted watch) are retried after a short wait; others are returned. Call again after
  // losing the lead to campaign anew (a lead that lapsed locally is resigned first); while
  // leading it returns the current epoch.
  absl::StatusOr<uint64_t> Campaign();

  // Leading (with this process's epoch) while the lease is known to be alive; otherwise the
  // leader last seen while campaigning (empty address and epoch 0 when none was seen).
  LeaderView view() const override;

  // The compare every write of the leader carries: the key's create revision is this process's
  // epoch (0 before it led: a compare no key passes).
  etcdserverpb::Compare Fence() const;

  // Graceful hand-over: deletes the key (fenced) and revokes the lease at once, so another
  // replica leads without waiting for the lease to expire. OK when not leading.
  absl::Status Resign();

  // True when this process no longer leads (or never did) within `timeout`.
  bool WaitUntilNotLeading(absl::Duration timeout);

  // Ends a Campaign in progress (CANCELLED) and the renewals; view() then says not leading.
  // The lease is left to expire. Idempotent.
  void Stop();

  // For tests: stops renewing the lease without revoking it, as a process that hangs would.
  void Abandon();

  // The lease bound to the key while leading (0 otherwise).
  int64_t lease_id() const;

 private:
  bool LeadingLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // One attempt: grant a lease, create the key if absent. The epoch when it won; 0 when another
  // holds it (its revision to watch from in *watch_from).
  absl::StatusOr<uint64_t> TryAcquire(int64_t* watch_from);
  // Waits until the key is deleted (or may have been: a broken watch, a bounded wait); false
  // when stopped.
  absl::Status WaitForVacancy(int64_t watch_from);
  // Waits `d` unless stopped; false when stopped.
  bool Pause(absl::Duration d);
  void RenewLoop();
  void StopRenewing();
  absl::Status Stopped() const;

  EtcdClient* const etcd_;
  const std::string key_;
  const std::string my_address_;
  const absl::Duration ttl_;
  Clock* const clock_;

  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool renewing_ ABSL_GUARDED_BY(mu_) = false;
  // This process holds the key under lease_ and epoch_ until lost_.
  bool holding_ ABSL_GUARDED_BY(mu_) = false;
  int64_t lease_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time renewed_at_ ABSL_GUARDED_BY(mu_);  // send time of the last acknowledged renewal
  // The leader seen while campaigning.
  std::string leader_address_ ABSL_GUARDED_BY(mu_);
  uint64_t leader_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // The watch Campaign waits on, cancelled by Stop.
  EtcdWatch* watch_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread renewer_;  // touched by Campaign (start) and StopRenewing (join) only
  absl::Mutex renewer_mu_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_LEADER_ELECTION_H_
