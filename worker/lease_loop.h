#ifndef STOKER_WORKER_LEASE_LOOP_H_
#define STOKER_WORKER_LEASE_LOOP_H_

// The worker's lease loop: whenever a session has credit beyond its outstanding tasks, the loop
// asks the coordinator for that many tasks of the session's (job, rank), records them in the
// TaskLedger and hands them to the producers; finished batches go to the session's stream. A
// session that got no task backs off (5 ms doubling up to config.max_lease_poll) so that an idle
// worker does not spin. The producer queue is bounded (BatchProducer::capacity) and the loop
// leases no more than it has room for.
//
// Memory (docs/security.md, "What a trainer stream may do"): credit is a client's request. Each
// stream may hold (leased, in production, queued or being written) at most its share of
// --memory-bytes, budget / (open streams + 1), one share kept free for the next stream, and at
// least one batch (counted twice when compressed: raw and encoded copies); all streams together
// never more than the budget. A client that never reads thus holds at most its share while the
// others keep being served.
//
// Tenants (docs/decisions/0071-tenant-fair-shares.md): each tenant with a stream here may have at
// most an equal part of the producer's queue queued, each of its streams an equal part of that
// (the ranks of one job on this worker share their job's), so that the producer's fair queue
// always has every active tenant's and job's tasks to choose from; and a tenant's streams together
// hold at most its TenantShare::max_prefetch_bytes (when set), each stream at least one batch.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/coordinator_client.h"
#include "worker/batch_producer.h"
#include "worker/stream_registry.h"
#include "worker/stream_session.h"
#include "worker/task_ledger.h"
#include "worker/worker_config.h"
#include "worker/worker_registration.h"

namespace stoker {

// Thread-safe.
class LeaseLoop {
 public:
  // Every pointer must outlive this. REQUIRES: config.Validate() is OK.
  LeaseLoop(const WorkerConfig& config, CoordinatorClient* coordinator,
            const WorkerRegistration* registration, StreamRegistry* streams, TaskLedger* ledger,
            BatchProducer* producer, Clock* clock);
  ~LeaseLoop();

  // Starts the loop's thread (once the worker is registered).
  void Start();
  // A session got credit or freed room: look again now rather than at the next poll.
  void Wake();
  // Stops leasing and joins the thread. Idempotent.
  void Stop();

 private:
  void Loop();
  // Returns the number of tasks leased.
  uint32_t LeaseFor(const std::shared_ptr<StreamSession>& session, uint32_t wanted);
  // The memory one task of `session` holds until written: its batch, twice when compressed.
  static uint64_t HeldBytesPerTask(const StreamSession& session);
  // The most `session` may hold, in tasks, with `sessions` open holding `held_bytes` in all.
  uint64_t MaxHeldTasks(const StreamSession& session, size_t sessions, uint64_t held_bytes) const;
  // The most `session` may hold, in tasks, under its tenant's quota `share`, the tenant's streams
  // holding `tenant_held_bytes` in all.
  static uint64_t MaxHeldTasksOfTenant(const StreamSession& session, const TenantShare& share,
                                       uint64_t tenant_held_bytes);
  // One tenant's streams in one pass of the loop.
  struct TenantPass {
    const std::string* name;  // owned by the sessions' jobs during the pass
    uint64_t held_bytes = 0;
    size_t streams = 0;
  };
  // The entry of `tenant` in tenants_ (made empty when missing). Loop thread only.
  TenantPass& TenantOf(const std::string& tenant);

  const uint64_t memory_bytes_;
  const absl::Duration max_lease_poll_;
  CoordinatorClient* const coordinator_;
  const WorkerRegistration* const registration_;
  StreamRegistry* const streams_;
  TaskLedger* const ledger_;
  BatchProducer* const producer_;
  Clock* const clock_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
  // Loop thread only: the tenants of this pass's streams. Few tenants: a linear search.
  std::vector<TenantPass> tenants_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_LEASE_LOOP_H_
