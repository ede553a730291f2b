#ifndef STOKER_TRAINER_CLIENT_LOADER_H_
#define STOKER_TRAINER_CLIENT_LOADER_H_

// The trainer client: streams finished batches of one rank of a job from every live worker.
//
//   stoker::LoaderOptions options;
//   options.coordinator_address = "10.0.0.5:7000";
//   options.job_name = "resnet-run-17";
//   options.spec = ...;                        // dataset, pipeline, batch size, epochs, ...
//   options.rank = rank;
//   ASSIGN_OR_RETURN(std::unique_ptr<stoker::Loader> loader, stoker::Loader::Open(options));
//   for (uint32_t e = 0; e < loader->epochs(); ++e) {
//     auto epoch = loader->Epoch();
//     for (const stoker::Batch& batch : epoch) Train(batch);
//     RETURN_IF_ERROR(epoch.status());
//   }
//
// Protocol walk-through (proto/stoker/v1, docs/architecture.md "Protocol"):
//   1. Open: OpenJob(name, spec, resume tokens, rank) with retry on UNAVAILABLE → job id, batches
//      per epoch per rank, batch bytes and shape. Then ClientHeartbeat → the live workers.
//   2. One Worker.StreamBatches per live worker (filtered by only_workers): Open{job, rank,
//      client id}, then Credit{n} as CreditPolicy decides (credit_policy.h).
//   3. Each batch received is acked on its stream at once and reported as received in the next
//      heartbeat; a duplicate (task already received this epoch) is acked and dropped.
//   4. A heartbeat every heartbeat_interval reports received tasks and refreshes the worker list:
//      streams that failed (worker died) are dropped and reopened, with backoff, to workers the
//      coordinator still (or again) lists; their leased tasks come back from other workers.
//   5. Hedging: once a stall is older than the overdue limit (credit_policy.h), each heartbeat
//      reports the epoch's missing tasks as `overdue`; the coordinator gives each leased one a
//      backup lease on another worker. The first copy wins, the other is a duplicate (step 3).
//   6. Stop() half-closes every stream; workers end them.
// Delivery: every batch of the rank exactly once per epoch; all of epoch e (in arrival order, or
// plan order with options.ordered) before any of epoch e+1.
//
// Checkpoints: save ResumeToken() beside the model after the step that used the last batch
// returned; a restarted trainer passes it in options.resume_tokens and continues where the
// checkpoint was taken (docs/architecture.md, "Resuming a trainer").

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "trainer_client/batch.h"
#include "trainer_client/loader_options.h"

namespace prometheus {
class Collectable;
}  // namespace prometheus

namespace stoker {

struct LoaderEnv;  // trainer_client/loader_env.h
class LoaderImpl;
class LoaderMetrics;
class BatchTail;  // trainer_client/loader_env.h
class Loader;

struct WorkerReceiveStats {  // per worker
  uint64_t worker_id = 0;
  std::string address;
  uint64_t batches = 0;  // accepted (not duplicates)
  uint64_t samples = 0;
  uint64_t bytes = 0;          // tensor bytes (decoded)
  uint64_t wire_bytes = 0;     // payload bytes as received (compressed, when the stream compresses)
  double produce_seconds = 0;  // the workers' own production time for these batches
  uint32_t share = 0;          // credit share of its open stream now (credit_policy.h); 0 if none
};

struct LoaderStats {
  uint64_t batches_received = 0;  // accepted, all workers
  uint64_t samples_received = 0;
  uint64_t bytes_received = 0;
  uint64_t batches_delivered = 0;  // returned by Next
  uint64_t duplicates_dropped = 0;
  uint64_t invalid_dropped = 0;  // batches that were not tasks of this job and rank
  uint64_t streams_opened = 0;
  uint64_t stream_failures = 0;
  // Compressed payloads that failed to decode (DATA_LOSS): each ended its stream unacknowledged,
  // so the worker handed the batch back and it was fetched again.
  uint64_t corrupt_payloads = 0;
  // CPU seconds spent decompressing payloads (gRPC's callback threads).
  double decode_seconds = 0;
  bool failed = false;  // the loader stopped on an error, which Next() returns
  // Seconds the training loop spent blocked inside Next (data wait), and between returning from
  // one Next and calling the next (its step). Meaningful with a single consuming thread.
  double wait_seconds = 0;
  double step_seconds = 0;
  std::vector<WorkerReceiveStats> workers;  // by worker id
  // Byte budget (credit_policy.h): the budget (prefetch_bytes, at least one batch per stream)
  // and the most bytes ever committed at once, which exceeds it only by the stall's extra
  // credit: at most max_stall_extra batches per open stream.
  uint64_t budget_bytes = 0;
  uint64_t max_committed_bytes = 0;
  uint32_t max_stall_extra = 0;
  size_t max_streams = 0;
  // Hedging: overdue tasks reported to the coordinator (each may get a backup lease).
  uint64_t overdue_reported = 0;

  // wait / (wait + step); 0 before any batch.
  double data_wait_fraction() const {
    const double total = wait_seconds + step_seconds;
    return total > 0 ? wait_seconds / total : 0;
  }
};

// The batches of one epoch as a range: `for (const Batch& b : loader->Epoch())`. The range stops
// at the epoch boundary; an error also ends it and is kept in status(). Not thread-safe; one
// range per consuming thread. Keep the range in a variable to read status() after the loop.
class EpochRange {
 public:
  class Iterator {
   public:
    const Batch& operator*() const { return range_->current_; }
    const Batch* operator->() const { return &range_->current_; }
    Iterator& operator++() {
      range_->Advance();
      return *this;
    }
    bool operator!=(const Iterator& other) const { return !(*this == other); }
    bool operator==(const Iterator& other) const {
      return (range_ == nullptr || range_->finished_) ==
             (other.range_ == nullptr || other.range_->finished_);
    }

   private:
    friend class EpochRange;
    explicit Iterator(EpochRange* range) : range_(range) {}
    EpochRange* range_;
  };

  EpochRange(const EpochRange&) = delete;
  EpochRange& operator=(const EpochRange&) = delete;

  // The first call fetches the first batch (blocking).
  Iterator begin();
  Iterator end() { return Iterator(nullptr); }
  // OK when the range ended at the epoch boundary (or the job had ended already).
  const absl::Status& status() const { return status_; }
  uint32_t epoch() const { return epoch_; }

 private:
  friend class Loader;
  EpochRange(Loader* loader, uint32_t epoch) : loader_(loader), epoch_(epoch) {}
  void Advance();

  Loader* loader_;
  uint32_t epoch_;
  bool started_ = false;
  bool finished_ = false;
  Batch current_;
  absl::Status status_;
};

// Thread-safe: every method may be called from any thread (statistics of wait/step time assume
// one consuming thread).
class Loader {
 public:
  // Validates the options (INVALID_ARGUMENT naming the field), opens the job on the coordinator
  // (retrying UNAVAILABLE with options.connect_backoff; an unreachable coordinator ends in
  // UNAVAILABLE naming its address; ALREADY_EXISTS / INVALID_ARGUMENT from the coordinator are
  // returned as they are), learns the live workers and starts streaming from them.
  static absl::StatusOr<std::unique_ptr<Loader>> Open(LoaderOptions options);
  // As above with injected coordinator client, stream factory and clock (tests).
  static absl::StatusOr<std::unique_ptr<Loader>> Open(LoaderOptions options, LoaderEnv env);

  ~Loader();  // Stop()s.
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Blocks until the next batch of the current epoch is available and returns it. Errors:
  // OUT_OF_RANGE after the last batch of the last epoch; CANCELLED after Stop();
  // FAILED_PRECONDITION when the coordinator reports the job finished while this client is
  // missing batches (e.g. another process consumed this rank); the coordinator's error (e.g.
  // NOT_FOUND) when it rejects the heartbeat permanently. Never busy-waits.
  absl::StatusOr<Batch> Next();

  // The rest of the current epoch (the one whose batches Next() returns now) as a range.
  EpochRange Epoch();

  // Where this rank stands, serialized (a stoker.v1.ResumeToken, a few dozen bytes in ordered
  // mode): exactly the batches Next() has returned so far. Save it with the checkpoint; pass it
  // in LoaderOptions::resume_tokens to continue from there.
  std::string ResumeToken() const;

  // The epoch Next() is in (== epochs() once everything was delivered).
  uint32_t current_epoch() const;
  // Batches per (normal, not resumed) epoch for this rank, number of epochs, one batch's tensor
  // shape and bytes.
  uint64_t batches_per_epoch() const;
  uint32_t epochs() const;
  absl::Span<const int64_t> batch_shape() const;
  uint64_t batch_bytes() const;
  uint64_t job_id() const;
  const std::string& client_id() const;
  // True when the coordinator placed the job's tail on this client (JobSpec.tail): the workers
  // send uint8 HWC and Next() runs the tail.
  bool tail_runs_here() const { return tail_ != nullptr; }

  LoaderStats stats() const;

  // Batch timelines (docs/metrics.md, "Batch timeline"): whether `batch` is traced now (one
  // relaxed load while the job is not), the clock of its spans, and the copy of a traced batch
  // to a device timed by the caller with TraceClockNanos (the Python module's DeviceFeeder): an
  // h2d span, after which the consumer's step starts.
  bool Traced(const Batch& batch) const;
  int64_t TraceClockNanos() const;
  void RecordDeviceCopy(const Batch& batch, int64_t start_ns, int64_t end_ns);

  // The loader's Prometheus metrics (docs/metrics.md) for the host program to serve, e.g.
  // exposer.RegisterCollectable(loader->metrics()). It collects nothing once the loader is
  // destroyed. The library itself serves nothing.
  std::shared_ptr<prometheus::Collectable> metrics() const;

  // Wakes every waiter (their calls return CANCELLED), half-closes the streams (cancelling any
  // the worker does not end within a couple of seconds) and joins every thread. Idempotent;
  // batches already returned stay valid.
  void Stop();

 private:
  friend class EpochRange;
  Loader(std::unique_ptr<LoaderImpl> impl, std::unique_ptr<BatchTail> tail);
  // `batch` through the client tail, when there is one.
  absl::StatusOr<Batch> Finish(Batch batch);
  // The next batch of `epoch`, or nullopt once `epoch` is over (or the job is).
  absl::StatusOr<std::optional<Batch>> NextInEpoch(uint32_t epoch);

  std::unique_ptr<LoaderImpl> impl_;
  std::unique_ptr<BatchTail> tail_;  // set when the job places its tail on this client
  std::shared_ptr<LoaderMetrics> metrics_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_H_
