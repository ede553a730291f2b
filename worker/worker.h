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
// (only the client's own consumed report completes a task).
//
// Memory (docs/security.md, "What a trainer stream may do"): credit is a client's request. Each
// stream may hold (leased, in production, queued or being written) at most its share of
// --memory-bytes, budget / (open streams + 1), one share kept free for the next stream, and at
// least one batch (counted twice when compressed: raw and encoded copies); all streams together
// never more than the budget. A client that never reads thus holds at most its share while the
// others keep being served. An acknowledgement of a task the stream was not sent (or
// acknowledged twice) ends that stream INVALID_ARGUMENT and is counted (protocol_errors), so
// only tasks this worker really delivered are reported.
//
// Reports (delivered, returned) wait in bounded lists (kMaxPendingReports each; past it the
// oldest are dropped: their leases then expire at the coordinator) and go out in heartbeats of
// at most kHeartbeatBytes (stats and job list included, unless those alone exceed it), which
// fit any coordinator's --max-request-bytes (>= 64 KiB); what does not fit goes in the next
// heartbeat, sent at once. A heartbeat answered RESOURCE_EXHAUSTED halves the reports per
// heartbeat (doubling back on success).
//
// Registration: a heartbeat answered NOT_FOUND (the coordinator forgot this worker),
// FAILED_PRECONDITION (its id is of a coordinator incarnation that lost its state, common/ids.h)
// or kExhaustedBeforeRegister times in a row RESOURCE_EXHAUSTED (it may have dropped the worker
// meanwhile) marks the worker unregistered: it registers again, each heartbeat interval until
// that succeeds (the registration observer hears of both changes; WorkerServer reports
// NOT_SERVING meanwhile). Unsent reports are kept and sent after, where they touch nothing they
// should not.
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

#include <array>
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

// Why a client stream was ended for breaking the protocol
// (stoker_worker_protocol_errors_total{reason}).
enum class ProtocolError {
  kAckUnsent,   // acknowledged a task it was not sent, or twice
  kBadMessage,  // unparsable, no open first, or an invalid set_compression
};
inline constexpr size_t kProtocolErrorReasons = 2;
// "ack_unsent", "bad_message".
const char* ProtocolErrorName(ProtocolError reason);

// Thread-safe.
class Worker {
 public:
  // Reports (delivered, returned) kept for the coordinator, each list.
  static constexpr size_t kMaxPendingReports = size_t{1} << 17;
  // Bytes of one heartbeat with reports: half the smallest coordinator --max-request-bytes.
  static constexpr size_t kHeartbeatBytes = 32 << 10;
  static constexpr int kExhaustedBeforeRegister = 3;

  // REQUIRES: config.Validate() is OK.
  Worker(WorkerConfig config, std::unique_ptr<CoordinatorClient> coordinator, Clock* clock);
  ~Worker();

  // Hears every change of registration (true: registered). Set before Start; called from the
  // worker's threads, without its locks held.
  void SetRegistrationObserver(std::function<void(bool registered)> observer);
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
  // The client of `session` has these batches: checked by StreamSession::Acknowledge (its
  // error, counted as kAckUnsent, ends the stream); the accepted ones are reported delivered.
  absl::Status Acknowledge(StreamSession& session, const stoker::v1::Ack& ack);
  void CountProtocolError(ProtocolError reason);
  uint64_t protocol_errors(ProtocolError reason) const;
  bool registered() const;

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
  MessagePool* message_pool() { return &pool_; }
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
  void SetRegistered(bool registered);
  // The memory one task of `session` holds until written: its batch, twice when compressed.
  static uint64_t HeldBytesPerTask(const StreamSession& session);
  // The most each session may hold, in tasks (see "Memory" above).
  uint64_t MaxHeldTasks(const StreamSession& session, size_t sessions, uint64_t held_bytes) const;
  // Moves reports into `request` within report_budget_ bytes; sets reports_backlog_.
  void TakeReportsLocked(stoker::v1::WorkerHeartbeatRequest* request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps `tasks` for a later heartbeat, within kMaxPendingReports.
  void KeepReportsLocked(std::vector<stoker::v1::TaskId>* list,
                         const google::protobuf::RepeatedPtrField<stoker::v1::TaskId>& tasks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A heartbeat failed with `status`: keeps track of refusals and unregisters when warranted.
  void OnHeartbeatFailed(const absl::Status& status);
  absl::StatusOr<std::shared_ptr<JobContext>> FindOrLoadJob(uint64_t job_id);
  // RESOURCE_EXHAUSTED naming --memory-bytes when the batches of `job` the worker may hold at
  // once exceed its memory budget.
  absl::Status CheckBatchFitsMemory(const JobContext& job) const;
  void HeartbeatLoop();
  // True when it succeeded and left reports behind for the next one.
  bool Heartbeat();
  void LeaseLoop();
  // Drops the contexts and held tasks of jobs the coordinator retired; returns their streams,
  // for the caller to end once it released the lock.
  std::vector<std::shared_ptr<StreamSession>> EvictJobsLocked(
      const google::protobuf::RepeatedField<uint64_t>& retired) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns the number of tasks leased.
  uint32_t LeaseFor(const std::shared_ptr<StreamSession>& session, uint32_t wanted);
  void Wake();
  using TaskKey = std::tuple<uint64_t, uint32_t, uint64_t>;  // job, epoch, batch index
  static TaskKey KeyOf(const stoker::v1::TaskId& task);

  const WorkerConfig config_;
  const std::unique_ptr<CoordinatorClient> coordinator_;
  Clock* const clock_;
  MessagePool pool_;
  PayloadBufferPool payload_buffers_;
  BatchProducer producer_;

  std::function<void(bool)> registration_observer_;  // Set before Start.
  std::array<std::atomic<uint64_t>, kProtocolErrorReasons> protocol_errors_{};

  mutable absl::Mutex mu_;
  std::string advertise_address_ ABSL_GUARDED_BY(mu_);
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  // Heartbeats answered RESOURCE_EXHAUSTED in a row.
  int exhausted_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;
  size_t report_budget_ ABSL_GUARDED_BY(mu_) = kHeartbeatBytes;
  // The last heartbeat left reports behind: the next one goes at once.
  bool reports_backlog_ ABSL_GUARDED_BY(mu_) = false;
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
