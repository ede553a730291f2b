#ifndef STOKER_WORKER_STREAM_SESSION_H_
#define STOKER_WORKER_STREAM_SESSION_H_

// One client stream as the worker's logic sees it: which (job, rank) it wants, how much credit
// the client granted, how many tasks are leased for it and not yet sent, and where finished
// batches go.
//
// Credit protocol (DESIGN.md §4): each Credit{n} allows n more batches; each batch written
// consumes one. The worker leases at most `credit - outstanding` more tasks, where outstanding
// counts tasks leased for this stream and not yet written, so a stream never holds more leases
// than its client can accept.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "stoker/v1/worker.pb.h"
#include "worker/batch_producer.h"
#include "worker/job_context.h"

namespace stoker {

// Where a session's finished batches go: the gRPC stream reactor implements it.
// Implementations are thread-safe and never call back into the session synchronously.
class BatchSink {
 public:
  virtual ~BatchSink() = default;
  // Queues `batch` for writing, in order.
  virtual void Send(std::unique_ptr<stoker::v1::BatchMessage> batch) = 0;
  // Ends the stream with `status`.
  virtual void Fail(const absl::Status& status) = 0;
};

// Thread-safe. Lock order: a session's mutex before its sink's.
class StreamSession {
 public:
  StreamSession(std::shared_ptr<JobContext> job, uint32_t rank, std::string client_id,
                BatchSink* sink, BatchMessagePool* pool, std::function<void()> on_capacity);

  const std::shared_ptr<JobContext>& job() const { return job_; }
  uint32_t rank() const { return rank_; }
  const std::string& client_id() const { return client_id_; }

  void AddCredit(uint32_t n);
  // Tasks to lease now: 0 while detached, without spare credit, or backing off after an empty
  // lease. `*next_poll` is lowered to when it wants to be asked again, if backing off.
  uint32_t WantedTasks(absl::Time now, absl::Time* next_poll);
  // The coordinator granted `n` tasks (n may be 0: then back off, doubling up to `max_poll`).
  void OnLeased(uint32_t n, absl::Time now, absl::Duration max_poll);
  // A producer finished one of this session's tasks.
  void OnProduced(absl::Status status, std::unique_ptr<stoker::v1::BatchMessage> batch);
  // The sink finished writing a batch of `payload_bytes` (it reached the transport; the sink
  // returns the message to the pool once the transport is done with its bytes).
  void OnSent(uint64_t payload_bytes);
  // Ends the stream with `status` (the sink finishes it; the worker closes the session when the
  // stream is done). No-op once detached.
  void End(const absl::Status& status);
  // The stream is gone: no more sends; late batches return to the pool.
  void Detach();
  bool detached() const;

  // Payload bytes handed to the sink and not yet written, and written so far.
  uint64_t queued_bytes() const;
  uint64_t sent_bytes() const;

 private:
  const std::shared_ptr<JobContext> job_;
  const uint32_t rank_;
  const std::string client_id_;
  BatchMessagePool* const pool_;
  const std::function<void()> on_capacity_;

  mutable absl::Mutex mu_;
  BatchSink* sink_ ABSL_GUARDED_BY(mu_);
  uint64_t credit_ ABSL_GUARDED_BY(mu_) = 0;       // Granted and not yet consumed by a write.
  uint64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;  // Leased and not yet written.
  absl::Time next_poll_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration poll_delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  uint64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sent_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker

#endif  // STOKER_WORKER_STREAM_SESSION_H_
