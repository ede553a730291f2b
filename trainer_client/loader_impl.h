#ifndef STOKER_TRAINER_CLIENT_LOADER_IMPL_H_
#define STOKER_TRAINER_CLIENT_LOADER_IMPL_H_

// Internal: the Loader's logic (loader.h has the contract and the protocol walk-through). It
// opens the job, runs the heartbeats and Next, and holds the one mutex of its two collaborators:
// the stream side (stream_side.h: worker streams, credit, hedging) and the consumer side
// (consumer_side.h: the epoch buffer, what the training loop takes, the received report).
// Threads:
//   - consumers call Next / NextInEpoch, which wait on mu_ until a batch of their epoch is ready;
//   - the heartbeat thread reports received tasks, reconciles streams with the coordinator's
//     worker list, reaps ended streams and re-evaluates credit (stall escalation);
//   - gRPC's callback threads call OnBatch / OnStreamDone for the worker streams (no thread of
//     our own per stream: worker_stream.h).
// All shared state is under mu_ (the receive path decodes before taking it). Lock order: mu_ →
// a stream's own lock → the message pool's. Streams and the pool never call back into the
// Loader while holding their own locks.
// Thread-safe.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "stoker/v1/coordinator.pb.h"
#include "trace/client_trace.h"
#include "trainer_client/batch.h"
#include "trainer_client/consumer_side.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"
#include "trainer_client/loader_options.h"
#include "trainer_client/stream_side.h"

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
  // Batch timelines, for Loader (trace/client_trace.h; thread-safe).
  ClientTrace& trace() { return trace_; }
  const ClientTrace& trace() const { return trace_; }

 private:
  LoaderImpl(LoaderOptions options, LoaderEnv env, v1::OpenJobResponse job);

  absl::Status Start();
  void HeartbeatLoop();
  // One heartbeat: reports received tasks and reconciles streams. Returns the RPC's status.
  absl::Status HeartbeatOnce();
  void Reconcile(const v1::ClientHeartbeatResponse& response) ABSL_LOCKS_EXCLUDED(mu_);
  void ReapEndedStreams() ABSL_LOCKS_EXCLUDED(mu_);
  // Hedging: adds the epoch's missing tasks as `overdue` once the stall passes OverdueAfter().
  void AddOverdueLocked(v1::ClientHeartbeatRequest* request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // A batch from a stream's receive path (stream_side.h).
  void OnBatch(StreamDelivery delivery) ABSL_LOCKS_EXCLUDED(mu_);
  void OnStreamDone(StreamId id, const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  void GrantCreditsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailLocked(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool CanReturnLocked(std::optional<uint32_t> epoch) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const LoaderOptions options_;
  const LoaderEnv env_;
  const v1::OpenJobResponse job_;
  ClientTrace trace_;  // thread-safe; its lock after mu_

  mutable absl::Mutex mu_;
  ConsumerSide consumer_ ABSL_GUARDED_BY(mu_);
  StreamSide streams_ ABSL_GUARDED_BY(mu_);  // its receive path runs outside mu_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
  int heartbeat_failures_ ABSL_GUARDED_BY(mu_) = 0;
  // The coordinator's last ClientHeartbeatResponse.data_error (logged when it changes).
  std::string data_error_ ABSL_GUARDED_BY(mu_);

  absl::Mutex stop_mu_;  // serializes Stop()
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread heartbeat_thread_;  // started in Start, joined in Stop
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_IMPL_H_
