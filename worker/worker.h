#ifndef STOKER_WORKER_WORKER_H_
#define STOKER_WORKER_WORKER_H_

// The worker's logic, composed of collaborators that own their state:
//   WorkerRegistration  the id the coordinator gave, and registering again when it lost this
//                       worker (worker/worker_registration.h);
//   StreamRegistry      admitted streams, their sessions and the job contexts they use
//                       (worker/stream_registry.h);
//   TaskLedger          the tasks leased and not yet acknowledged, and the delivered and
//                       returned reports owed to the coordinator (worker/task_ledger.h);
//   LeaseLoop           leasing for sessions with credit, within their share of memory
//                       (worker/lease_loop.h);
//   BatchProducer       the producer threads (worker/batch_producer.h).
// The Worker runs the heartbeat loop that ties them together: each heartbeat carries the stats,
// the jobs held and the reports; its answer drops revoked leases, retires jobs (their streams end
// with NOT_FOUND) and sets trace sampling. A heartbeat goes each interval, and at once when tasks
// wait to be handed back or the last one left reports behind, while the coordinator answers.
//
// Acknowledgements: an acknowledgement of a task the stream was not sent (or acknowledged
// twice) ends that stream INVALID_ARGUMENT and is counted (protocol_errors), so only tasks this
// worker really delivered are reported.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "coordinator/coordinator_client.h"
#include "data/dataset_io.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.pb.h"
#include "worker/batch_producer.h"
#include "worker/lease_loop.h"
#include "worker/stream_registry.h"
#include "worker/stream_session.h"
#include "worker/task_ledger.h"
#include "worker/worker_config.h"
#include "worker/worker_registration.h"

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
  // Opens jobs' datasets through `io` (data/dataset_io.h). REQUIRES: config.Validate() is OK.
  Worker(WorkerConfig config, std::unique_ptr<CoordinatorClient> coordinator, DatasetIo io,
         Clock* clock);
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

  using OpenDone = StreamRegistry::OpenDone;
  // Called by a stream on its Open message: StreamRegistry::OpenAsync.
  void OpenSessionAsync(stoker::v1::OpenStream open, BatchSink* sink, OpenDone done,
                        TenantScope caller = {});
  // StreamRegistry::Admit and Release.
  absl::Status AdmitStream();
  void ReleaseStream();
  // Called when the stream is done: the session is detached, its unacknowledged tasks handed
  // back, and it is forgotten.
  void CloseSession(const std::shared_ptr<StreamSession>& session);
  // The client of `session` has these batches: checked by StreamSession::Acknowledge (its
  // error, counted as kAckUnsent, ends the stream); the accepted ones are reported delivered.
  absl::Status Acknowledge(StreamSession& session, const stoker::v1::Ack& ack);
  void CountProtocolError(ProtocolError reason);
  uint64_t protocol_errors(ProtocolError reason) const;
  // Coordinator responses refused as a deposed leader's (CoordinatorClient).
  uint64_t stale_epoch_responses() const { return coordinator_->stale_epoch_responses(); }
  bool registered() const { return registration_.registered(); }

  uint64_t worker_id() const { return registration_.worker_id(); }
  stoker::v1::WorkerStats stats() const;
  StreamTraffic traffic() const { return streams_.traffic(); }
  // Seconds per op per sample, over everything produced (for metrics).
  OpTimeHistograms op_times() const { return producer_.op_times(); }
  // Samples replaced because they could not be read or decoded, by reason.
  const BadSampleCounters& bad_samples() const { return producer_.bad_samples(); }
  // Producer seconds spent on each tenant's batches, and the tenants' current shares.
  absl::flat_hash_map<std::string, double> tenant_busy_seconds() const {
    return producer_.tenant_busy_seconds();
  }
  absl::flat_hash_map<std::string, TenantShare> tenant_shares() const {
    return producer_.tenant_shares();
  }
  // The jobs this worker holds.
  std::vector<std::shared_ptr<const JobContext>> jobs() const { return streams_.jobs(); }
  // The decoded cache's counters (worker/decoded_cache.h); nullopt without one.
  std::optional<DecodedCacheStats> decoded_cache_stats() const {
    if (decoded_cache_ == nullptr) return std::nullopt;
    return decoded_cache_->stats();
  }
  MessagePool* message_pool() { return &pool_; }
  PayloadBufferPool* payload_buffers() { return &payload_buffers_; }

 private:
  // Worker::Start, with config.decoded_cache_pretouch: maps the cache whole, logging how long.
  void PretouchDecodedCache();
  void HeartbeatLoop();
  // True when it succeeded and left reports behind for the next one.
  bool Heartbeat();
  // Applies an answered heartbeat; returns the streams of retired jobs, to end.
  std::vector<std::shared_ptr<StreamSession>> OnHeartbeatAnswered(
      const stoker::v1::WorkerHeartbeatResponse& response);

  const WorkerConfig config_;
  const std::unique_ptr<CoordinatorClient> coordinator_;
  Clock* const clock_;
  MessagePool pool_;
  PayloadBufferPool payload_buffers_;
  // Null without --decoded-cache-bytes. Before producer_: its threads use it until they stop.
  const std::unique_ptr<DecodedCache> decoded_cache_;
  BatchProducer producer_;
  WorkerRegistration registration_;
  TaskLedger ledger_;
  StreamRegistry streams_;
  LeaseLoop lease_loop_;
  std::array<std::atomic<uint64_t>, kProtocolErrorReasons> protocol_errors_{};

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The last heartbeat succeeded (a due heartbeat goes at once only then). The worker is
  // unregistered only after a failed heartbeat, so this also means it is registered.
  bool coordinator_reachable_ ABSL_GUARDED_BY(mu_) = true;
  // Tasks wait to be handed back, or the last heartbeat left reports behind.
  bool heartbeat_due_ ABSL_GUARDED_BY(mu_) = false;
  std::thread heartbeat_thread_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_WORKER_H_
