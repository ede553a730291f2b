#ifndef STOKER_TRAINER_CLIENT_LOADER_IMPL_H_
#define STOKER_TRAINER_CLIENT_LOADER_IMPL_H_

// Internal: the Loader's logic (loader.h has the contract and the protocol walk-through).
// Threads:
//   - consumers call Next / NextInEpoch, which wait on mu_ until a batch of their epoch is ready;
//   - the heartbeat thread reports received tasks, reconciles streams with the coordinator's
//     worker list, reaps ended streams and re-evaluates credit (stall escalation);
//   - gRPC's callback threads call OnBatch / OnStreamDone for the worker streams (no thread of
//     our own per stream: worker_stream.h).
// All shared state is under mu_. Lock order: mu_ → a stream's own lock → the message pool's.
// Streams and the pool never call back into the Loader while holding their own locks.
// Thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "stoker/v1/coordinator.pb.h"
#include "trace/client_trace.h"
#include "trainer_client/bad_sample_budget.h"
#include "trainer_client/batch.h"
#include "trainer_client/consumption_window.h"
#include "trainer_client/credit_policy.h"
#include "trainer_client/epoch_buffer.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"
#include "trainer_client/loader_options.h"
#include "wire/compression_auto.h"
#include "wire/message_pool.h"
#include "wire/payload_decode.h"

namespace stoker {

class LoaderImpl {
 public:
  static absl::StatusOr<std::unique_ptr<LoaderImpl>> Open(LoaderOptions options, LoaderEnv env);
  ~LoaderImpl();

  // nullopt: `epoch` is over (or, without an epoch, the whole job is).
  absl::StatusOr<std::optional<Batch>> Next(std::optional<uint32_t> epoch);
  void Stop();

  uint32_t current_epoch() const;
  std::string ResumeToken() const;
  LoaderStats stats() const;
  const v1::OpenJobResponse& job() const { return job_; }
  const LoaderOptions& options() const { return options_; }

  // Batch timelines, for Loader (client_trace.h): whether `task` is sampled (one relaxed load
  // while not tracing) and the clock of its spans; the consumer got sampled `task` from Next
  // (after the client tail): its handoff ends now; a traced batch's copy to a device, timed by
  // the caller with TraceNow: an h2d span, after which the consumer's step starts.
  bool TraceSampled(const v1::TaskId& task) const { return trace_.Sampled(task); }
  int64_t TraceNow() const { return trace_.Now(); }
  void TraceHandedOut(const v1::TaskId& task) ABSL_LOCKS_EXCLUDED(mu_);
  void TraceDeviceCopy(const v1::TaskId& task, int64_t start_ns, int64_t end_ns)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct StreamState {
    std::string address;
    std::unique_ptr<WorkerStream> stream;  // set right after the factory returns
    bool done = false;
    // With compression "auto": this stream's probing and decision (compression_auto.h).
    std::unique_ptr<AutoCompression> auto_compression;
    // Why the Loader ends the stream (a payload that did not decode); the heartbeat thread
    // cancels it, and its batches are dropped unacknowledged meanwhile.
    absl::Status failure;
  };
  struct AddressState {
    StreamId open_stream = 0;  // 0: none
    int failures = 0;
    absl::Time next_attempt = absl::InfinitePast();
  };

  LoaderImpl(LoaderOptions options, LoaderEnv env, v1::OpenJobResponse job);

  absl::Status Start();
  void HeartbeatLoop();
  // One heartbeat: reports received tasks and reconciles streams. Returns the RPC's status.
  absl::Status HeartbeatOnce();
  void Reconcile(const v1::ClientHeartbeatResponse& response) ABSL_LOCKS_EXCLUDED(mu_);
  void OpenStreamLocked(const std::string& address) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReapEndedStreams() ABSL_LOCKS_EXCLUDED(mu_);

  // Hedging: adds the epoch's missing tasks as `overdue` once the stall passes OverdueAfter().
  void AddOverdueLocked(v1::ClientHeartbeatRequest* request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void OnBatch(StreamId id, const std::string& address, Batch batch) ABSL_LOCKS_EXCLUDED(mu_);
  // A batch of stream `id` did not decode or its header lies: the stream ends (cancelled by the
  // heartbeat thread, not from gRPC's callback) and the batch is not acknowledged, so its worker
  // hands it back.
  void FailStreamLocked(StreamId id, const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Feeds `decoded` to the stream's auto compression and sends the worker what it asks for.
  void ObserveCompressionLocked(StreamState* state, const DecodedBatch& decoded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnStreamDone(StreamId id, const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends the credit the policy says is owed; records the byte budget's high-water mark.
  void GrantCreditsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailLocked(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Batch timelines (client_trace.h): the consumer's step since the last sampled hand-out
  // (at Next's entry), and the buffer wait of a sampled batch popped now (returns the pop's
  // instant, 0 when not sampled).
  void TraceStepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t TracePopped(const v1::TaskId& task);
  bool CanReturnLocked(std::optional<uint32_t> epoch) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const LoaderOptions options_;
  const LoaderEnv env_;
  const v1::OpenJobResponse job_;
  const std::shared_ptr<MessagePool> pool_;  // received batches' headers
  // Buffers of a batch's size: received pieces gathered (BatchPayload::contiguous()) and
  // compressed payloads decoded.
  const std::shared_ptr<BufferPool> gather_buffers_;
  // What OpenStream.compression asks for (unset for none and auto).
  std::optional<v1::CompressionChoice> open_compression_;

  mutable absl::Mutex mu_;
  EpochBuffer buffer_ ABSL_GUARDED_BY(mu_);
  BadSampleBudget bad_samples_ ABSL_GUARDED_BY(mu_);
  std::map<StreamId, StreamState> streams_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, AddressState> addresses_ ABSL_GUARDED_BY(mu_);
  StreamId next_stream_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Tasks received since the last successful heartbeat.
  std::vector<v1::TaskId> received_tasks_ ABSL_GUARDED_BY(mu_);
  int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
  LoaderStats stats_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, WorkerReceiveStats> worker_stats_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> last_return_ ABSL_GUARDED_BY(mu_);
  ConsumptionWindow consumption_ ABSL_GUARDED_BY(mu_);
  int heartbeat_failures_ ABSL_GUARDED_BY(mu_) = 0;
  bool warned_no_workers_ ABSL_GUARDED_BY(mu_) = false;
  // The coordinator's last ClientHeartbeatResponse.data_error (logged when it changes).
  std::string data_error_ ABSL_GUARDED_BY(mu_);
  absl::BitGen jitter_ ABSL_GUARDED_BY(mu_);
  CreditPolicy policy_ ABSL_GUARDED_BY(mu_);
  ClientTrace trace_;  // thread-safe; its lock after mu_
  // The sampled batch Next popped last and when, until the Loader hands it out.
  std::optional<std::pair<v1::TaskId, int64_t>> popped_traced_ ABSL_GUARDED_BY(mu_);
  // The last sampled batch handed out and when the consumer got it (its consumer_step follows).
  std::optional<std::pair<v1::TaskId, int64_t>> last_traced_handout_ ABSL_GUARDED_BY(mu_);

  absl::Mutex stop_mu_;  // serializes Stop()
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread heartbeat_thread_;  // started in Start, joined in Stop
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_IMPL_H_
