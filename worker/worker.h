#ifndef STOKER_WORKER_WORKER_H_
#define STOKER_WORKER_WORKER_H_

// The worker's logic: registration and heartbeats with the coordinator, the client sessions
// opened by streams, the lease loop, and the producer pool.
//
// Lease loop: whenever a session has credit beyond its outstanding tasks, the loop asks the
// coordinator for that many tasks of the session's (job, rank) and hands them to the producers;
// finished batches go to the session's stream. A session that got no task backs off (5 ms
// doubling up to config.max_lease_poll) so that an idle worker does not spin. Tasks the client
// acknowledged are reported as delivered with the next heartbeat, which releases their leases
// (only the client's own consumed report completes a task). A heartbeat answered NOT_FOUND (the
// coordinator forgot this worker) or FAILED_PRECONDITION (its id is of a coordinator
// incarnation that lost its state, common/ids.h) makes the worker register again; unsent
// reports are kept and sent with the next heartbeat, where they touch nothing they should not.
//
// Job lifecycle: every heartbeat lists the jobs the worker holds a context for (source, pipeline,
// epoch plans); the coordinator answers with those it retired (finished or abandoned), and the
// worker drops their contexts, forgets their held tasks and ends their streams with NOT_FOUND, so
// its memory follows the jobs alive, not every job it ever served. The producer queue is bounded
// (BatchProducer::capacity) and the lease loop leases no more than it has room for.
//
// Hand-back: the worker remembers which session each leased task is for until the client acks
// it. When a stream ends (client half-close, cancel, broken connection) its unacknowledged tasks
// are handed back at once in a heartbeat's `returned` (sent right away, not at the next
// interval), so they go back to pending without waiting for lease expiry; a task that did reach
// the client may then be produced again, and the client drops that duplicate by task id.
// Leases in a heartbeat's drop_leases (expired, maybe given to another worker) are forgotten:
// never handed back; a batch already in production may still be sent, which the client drops
// as a duplicate if the other copy came first.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.pb.h"
#include "worker/batch_producer.h"
#include "worker/stream_session.h"
#include "worker/worker_config.h"

namespace stoker {

// Thread-safe.
class Worker {
 public:
  // REQUIRES: config.Validate() is OK.
  Worker(WorkerConfig config, std::unique_ptr<CoordinatorClient> coordinator, Clock* clock);
  ~Worker();

  // Registers as `advertise_address` (retrying while the coordinator is UNAVAILABLE, per
  // config.register_backoff) and starts the heartbeat and lease threads.
  absl::Status Start(const std::string& advertise_address);
  // Graceful drain (SIGTERM): stops leasing; keeps producing and sending what it holds until
  // every held task is acknowledged or `deadline` passes; then ends every stream with
  // UNAVAILABLE "worker draining" (clients reconnect elsewhere), hands the unacknowledged tasks
  // back and reports everything in a last heartbeat. Call before Stop.
  void Drain(absl::Duration deadline);
  // Stops leasing and producing; sessions stay until their streams close. Idempotent.
  void Stop();

  using OpenDone = std::function<void(absl::StatusOr<std::shared_ptr<StreamSession>>)>;
  // Called by a stream on its Open message; `done` runs later on the worker's opener thread,
  // because opening may ask the coordinator for the job and gRPC callbacks must not block.
  // Errors: NOT_FOUND for an unknown job (message from the coordinator), INVALID_ARGUMENT for a
  // rank outside the job's world size or a bad open.compression, RESOURCE_EXHAUSTED for a job whose
  // batches the worker's memory budget cannot hold (--memory-bytes), UNAVAILABLE while stopping.
  void OpenSessionAsync(stoker::v1::OpenStream open, BatchSink* sink, OpenDone done);
  // Admits a new stream: RESOURCE_EXHAUSTED naming --max-streams when config.max_streams are
  // open. Every admitted stream calls ReleaseStream once when it is done.
  absl::Status AdmitStream();
  void ReleaseStream();
  // Called when the stream is done; the session is detached and forgotten.
  void CloseSession(const std::shared_ptr<StreamSession>& session);
  // The client has these batches.
  void RecordDelivered(const stoker::v1::Ack& ack);

  uint64_t worker_id() const;
  stoker::v1::WorkerStats stats() const;
  // Batch payload bytes waiting in open streams' send queues, and written to streams so far.
  struct StreamTraffic {
    uint64_t queued_bytes = 0;
    uint64_t sent_bytes_total = 0;
    // Payload bytes handed to streams, before and after compression, by codec name.
    std::map<std::string, PayloadBytes> payload_bytes_total;
  };
  StreamTraffic traffic() const;
  // Seconds per op per sample, over everything produced (for metrics).
  OpTimeHistograms op_times() const { return producer_.op_times(); }
  // Samples replaced because they could not be read or decoded, by reason.
  const BadSampleCounters& bad_samples() const { return producer_.bad_samples(); }
  BatchMessagePool* message_pool() { return &pool_; }
  PayloadBufferPool* payload_buffers() { return &payload_buffers_; }

 private:
  struct PendingOpen {
    stoker::v1::OpenStream open;
    BatchSink* sink;
    OpenDone done;
  };
  absl::StatusOr<std::shared_ptr<StreamSession>> OpenSession(const stoker::v1::OpenStream& open,
                                                             BatchSink* sink);
  void OpenLoop();
  absl::Status Register();
  absl::StatusOr<std::shared_ptr<JobContext>> FindOrLoadJob(uint64_t job_id);
  // RESOURCE_EXHAUSTED naming --memory-bytes when the batches of `job` the worker may hold at
  // once exceed its memory budget.
  absl::Status CheckBatchFitsMemory(const JobContext& job) const;
  void HeartbeatLoop();
  void Heartbeat();
  void LeaseLoop();
  // Drops the contexts and held tasks of jobs the coordinator retired; returns their streams,
  // for the caller to end once it released the lock.
  std::vector<std::shared_ptr<StreamSession>> EvictJobsLocked(
      const google::protobuf::RepeatedField<uint64_t>& retired) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LeaseFor(const std::shared_ptr<StreamSession>& session, uint32_t wanted);
  void Wake();
  using TaskKey = std::tuple<uint64_t, uint32_t, uint64_t>;  // job, epoch, batch index
  static TaskKey KeyOf(const stoker::v1::TaskId& task);

  const WorkerConfig config_;
  const std::unique_ptr<CoordinatorClient> coordinator_;
  Clock* const clock_;
  BatchMessagePool pool_;
  PayloadBufferPool payload_buffers_;
  BatchProducer producer_;

  mutable absl::Mutex mu_;
  std::string advertise_address_ ABSL_GUARDED_BY(mu_);
  uint64_t worker_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(1);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::shared_ptr<StreamSession>> sessions_ ABSL_GUARDED_BY(mu_);
  uint64_t closed_sessions_sent_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, PayloadBytes> closed_sessions_payload_bytes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::shared_ptr<JobContext>> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<stoker::v1::TaskId> delivered_ ABSL_GUARDED_BY(mu_);
  // Leased tasks not yet acknowledged, and the session each is for.
  std::map<TaskKey, const StreamSession*> held_ ABSL_GUARDED_BY(mu_);
  // Tasks to hand back with the next heartbeat (sent at once when non-empty).
  std::vector<stoker::v1::TaskId> returned_ ABSL_GUARDED_BY(mu_);
  // The last heartbeat succeeded (hand-backs are sent at once only then).
  bool coordinator_reachable_ ABSL_GUARDED_BY(mu_) = true;
  std::deque<PendingOpen> pending_opens_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint32_t> open_streams_{0};  // Admitted and not yet released.
  std::thread open_thread_;
  std::thread heartbeat_thread_;
  std::thread lease_thread_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_WORKER_H_
