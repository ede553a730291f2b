#ifndef STOKER_WORKER_TASK_LEDGER_H_
#define STOKER_WORKER_TASK_LEDGER_H_

// The tasks a worker holds leases on, and the reports it owes the coordinator about them.
//
// Held tasks: the worker remembers which session each leased task is for until the client acks
// it. When a stream ends (client half-close, cancel, broken connection) its unacknowledged tasks
// are handed back (`returned` in a heartbeat, sent at once: the on_hand_back callback wakes the
// heartbeat loop), so they go back to pending without waiting for lease expiry; a task that did
// reach the client may then be produced again, and the client drops that duplicate by task id.
// Leases in a heartbeat's drop_leases (expired, maybe given to another worker) and those of
// retired jobs are forgotten: never handed back; a batch already in production may still be
// sent, which the client drops as a duplicate if the other copy came first. Tasks the client
// acknowledged are reported as delivered, which releases their leases (only the client's own
// consumed report completes a task).
//
// Reports (delivered, returned) wait in bounded lists (kMaxPendingReports each; past it the
// oldest are dropped: their leases then expire at the coordinator) and go out in heartbeats of
// at most kHeartbeatBytes (stats and job list included, unless those alone exceed it), which
// fit any coordinator's --max-request-bytes (>= 64 KiB); what does not fit goes in the next
// heartbeat, sent at once. A heartbeat answered RESOURCE_EXHAUSTED halves the reports per
// heartbeat (doubling back on success). Reports a failed heartbeat carried are kept for the
// next: they are harmless whoever gets them (a delivered report only releases a lease held by
// the id it names, hand-backs only touch leases of that id, and ids never repeat across
// coordinator incarnations).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "stoker/v1/coordinator.pb.h"
#include "worker/stream_session.h"

namespace stoker {

// Thread-safe.
class TaskLedger {
 public:
  // Reports (delivered, returned) kept for the coordinator, each list.
  static constexpr size_t kMaxPendingReports = size_t{1} << 17;
  // Bytes of one heartbeat with reports: half the smallest coordinator --max-request-bytes.
  static constexpr size_t kHeartbeatBytes = 32 << 10;

  // `on_hand_back` runs, without the ledger's lock held, whenever tasks were queued to hand back.
  explicit TaskLedger(std::function<void()> on_hand_back);

  // Leases taken for `session`. A session detached meanwhile has already handed back what it
  // held: these are queued to hand back too.
  void Hold(const StreamSession& session,
            const google::protobuf::RepeatedPtrField<stoker::v1::Lease>& leases);
  // The client has these tasks: no longer held, and reported delivered.
  void Delivered(const google::protobuf::RepeatedPtrField<stoker::v1::TaskId>& tasks);
  // The stream of `session` ended: queues its unacknowledged tasks to hand back; returns how many.
  size_t HandBack(const StreamSession* session);

  // Moves reports into `request` (already holding everything else) within the report budget.
  void TakeReports(stoker::v1::WorkerHeartbeatRequest* request);
  // The heartbeat was answered: the budget doubles back, revoked leases and those of retired
  // jobs are forgotten.
  void OnHeartbeatAnswered(const stoker::v1::WorkerHeartbeatResponse& response);
  // The heartbeat `request` failed with `status`: its reports are kept for the next one, and the
  // budget halves when the coordinator found it too large (RESOURCE_EXHAUSTED).
  void OnHeartbeatFailed(const stoker::v1::WorkerHeartbeatRequest& request,
                         const absl::Status& status);
  // The last TakeReports left reports behind.
  bool backlog() const;
  // Something waits to be sent at once: hand-backs, or reports the last heartbeat left behind.
  bool reports_due() const;

  size_t held() const;
  size_t to_hand_back() const;
  // Waits on `clock` until no task is held or `deadline` passes; returns whether none is.
  bool AwaitNoneHeld(Clock* clock, absl::Time deadline);

 private:
  using TaskKey = std::tuple<uint64_t, uint32_t, uint64_t>;  // job, epoch, batch index
  static TaskKey KeyOf(const stoker::v1::TaskId& task);
  // Keeps `tasks` for a later heartbeat, within kMaxPendingReports.
  void KeepReportsLocked(std::vector<stoker::v1::TaskId>* list,
                         const google::protobuf::RepeatedPtrField<stoker::v1::TaskId>& tasks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::function<void()> on_hand_back_;
  mutable absl::Mutex mu_;
  // Leased tasks not yet acknowledged, and the session each is for.
  std::map<TaskKey, const StreamSession*> held_ ABSL_GUARDED_BY(mu_);
  std::vector<stoker::v1::TaskId> delivered_ ABSL_GUARDED_BY(mu_);
  // Tasks to hand back with the next heartbeat.
  std::vector<stoker::v1::TaskId> returned_ ABSL_GUARDED_BY(mu_);
  size_t report_budget_ ABSL_GUARDED_BY(mu_) = kHeartbeatBytes;
  bool backlog_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace stoker

#endif  // STOKER_WORKER_TASK_LEDGER_H_
