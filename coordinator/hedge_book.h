#ifndef STOKER_COORDINATOR_HEDGE_BOOK_H_
#define STOKER_COORDINATOR_HEDGE_BOOK_H_

// Backup ("hedge") leases, as MapReduce's backup tasks: when a client reports a task overdue
// (ClientHeartbeatRequest.overdue) and the task is leased to some worker, the coordinator queues
// it here; the next LeaseTasks for that (job, rank) from a *different* worker receives it as
// well as (before) its pending tasks. The task then has two producers; the first batch to reach
// the client wins and the client drops the second by task id (exactly once is the client's
// dedup, as for every re-lease). Only the client's consumed report completes the task
// (docs/architecture.md, Delivery guarantee), which removes the primary lease; a worker's delivered
// report only releases that worker's lease, and the hedge worker holds none in the cluster state.
//
// Hedge leases are soft state, like every lease, and are not recorded in ClusterState: a hedge
// worker that dies or closes its stream simply loses the copy (its hand-back of the task is
// ignored, since the task is not leased to it), and the primary lease still stands. Each task
// is hedged at most once (until it is done and PruneStale() forgets it).
//
// It reads the ClusterState it is given (who holds a lease, what is done) and never changes it.
//
// Thread-compatible: the Coordinator guards it with its mutex.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "coordinator/cluster_state.h"
#include "stoker/v1/common.pb.h"

namespace stoker {

class HedgeBook {
 public:
  // Queues a backup lease of `task` (of `rank`; the caller checked both) when `state` has it
  // leased and it was not hedged before: then returns the primary lease's holder. Otherwise
  // nullopt, and nothing changes.
  std::optional<uint64_t> HedgeIfLeased(const ClusterState& state, const stoker::v1::TaskId& task,
                                        uint32_t rank);

  // Up to `max` queued tasks of (job, rank) that `worker` may take: not held by it, not done
  // and still leased in `state` (a task no longer leased is pending and is leased the normal
  // way). Taken and stale entries leave the queue; entries held by `worker` stay for another.
  std::vector<stoker::v1::TaskId> TakeBackups(const ClusterState& state, uint64_t job_id,
                                              uint32_t rank, uint64_t worker, size_t max);

  // Forgets the tasks that are done, or whose job is gone, in `state` (so memory stays bounded
  // by tasks in flight).
  void PruneStale(const ClusterState& state);

  // Tasks hedged so far (counter) and queued now.
  uint64_t hedged_total() const { return hedged_total_; }
  size_t queued() const;

 private:
  using Key = std::tuple<uint64_t, uint32_t, uint64_t>;  // job, epoch, batch index
  struct Entry {
    stoker::v1::TaskId task;
    uint64_t holder = 0;
  };
  static Key KeyOf(const stoker::v1::TaskId& task);

  std::map<std::pair<uint64_t, uint32_t>, std::deque<Entry>> queues_;  // by (job, rank)
  std::map<Key, stoker::v1::TaskId> hedged_;  // every task hedged and not yet pruned
  uint64_t hedged_total_ = 0;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_HEDGE_BOOK_H_
