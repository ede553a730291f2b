#ifndef STOKER_WORKER_STREAM_SESSION_H_
#define STOKER_WORKER_STREAM_SESSION_H_

// One client stream as the worker's logic sees it: which (job, rank) it wants, how much credit
// the client granted, how many tasks are leased for it and not yet sent, and where finished
// batches go.
//
// Credit protocol (docs/architecture.md, Protocol): each Credit{n} allows n more batches; each
// batch written consumes one. Credit is the client's request, not a grant: the worker leases at
// most `min(credit, max_held) - outstanding` more tasks, where outstanding counts tasks leased for
// this stream and not yet written (in production, queued, or being written: each holds one
// batch) and max_held is the stream's share of the worker's memory in batches (the LeaseLoop sets
// it), so a stream never holds more leases than its client can accept or its share can hold.
//
// Acknowledgements (docs/security.md, "What a trainer stream may do"): a stream may acknowledge
// only batches it was sent and has not acknowledged yet (a task sent twice may be acknowledged
// twice); anything else is a protocol error that ends the stream. A stream holding
// kMaxUnackedBatches sent and unacknowledged batches leases nothing more until it acknowledges.
//
// Compression (docs/decisions/0029-stream-compression-formats-negotiation-both-sides.md): the
// session encodes each produced batch on the producer's thread as the client chose
// (OpenStream.compression, then any set_compression), with a codec this worker offers, else raw;
// every header lists the offered codecs and the producer thread count, from which the client's
// `auto` mode decides.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "stoker/v1/worker.pb.h"
#include "worker/batch_producer.h"
#include "worker/job_context.h"
#include "worker/outgoing_batch.h"

namespace stoker {

// Where a session's finished batches go: the gRPC stream reactor implements it.
// Implementations are thread-safe and never call back into the session synchronously.
class BatchSink {
 public:
  virtual ~BatchSink() = default;
  // Queues `batch` for writing, in order.
  virtual void Send(OutgoingBatch batch) = 0;
  // Ends the stream with `status`.
  virtual void Fail(const absl::Status& status) = 0;
};

// How a session encodes payloads. Thread-compatible value.
struct SessionEncoding {
  // The codecs this worker offers (WorkerConfig::offered_compression).
  std::vector<stoker::v1::Compression> offered;
  // The client's choice at open. REQUIRES: ValidateCompressionChoice is OK.
  stoker::v1::CompressionChoice requested;
  // The worker's producer threads (reported in every header).
  uint32_t producer_threads = 1;
  // Where compressed payloads go; may be null when nothing is offered.
  PayloadBufferPool* buffers = nullptr;
};

// Payload bytes of the batches handed to streams, before and after compression.
struct PayloadBytes {
  uint64_t raw = 0;
  uint64_t wire = 0;
};

// Thread-safe. Lock order: a session's mutex before its sink's.
class StreamSession {
 public:
  StreamSession(std::shared_ptr<JobContext> job, uint32_t rank, std::string client_id,
                BatchSink* sink, MessagePool* pool, std::function<void()> on_capacity,
                SessionEncoding encoding = {});

  const std::shared_ptr<JobContext>& job() const { return job_; }
  uint32_t rank() const { return rank_; }
  const std::string& client_id() const { return client_id_; }

  // Batches sent and not yet acknowledged past which a stream leases nothing more.
  static constexpr uint64_t kMaxUnackedBatches = 4096;

  void AddCredit(uint32_t n);
  // Tasks to lease now: 0 while detached, without spare credit, holding `max_held` tasks
  // (leased and not yet written), holding kMaxUnackedBatches unacknowledged, or backing off
  // after an empty lease. `*next_poll` is lowered to when it wants to be asked again, if
  // backing off.
  uint32_t WantedTasks(absl::Time now, absl::Time* next_poll, uint64_t max_held);
  // Tasks leased for this stream and not yet written: each holds (or will hold) one batch.
  uint64_t held_tasks() const;
  // Checks the client's acknowledgement, task by task: each must have been sent on this stream
  // and not acknowledged since. Appends the accepted tasks (those before the first bad one) to
  // `accepted`; INVALID_ARGUMENT naming ack.tasks and the first task that was not sent or was
  // already acknowledged.
  absl::Status Acknowledge(const stoker::v1::Ack& ack,
                           google::protobuf::RepeatedPtrField<stoker::v1::TaskId>* accepted);
  // The coordinator granted `n` tasks (n may be 0: then back off, doubling up to `max_poll`).
  void OnLeased(uint32_t n, absl::Time now, absl::Duration max_poll);
  // A producer finished one of this session's tasks: encodes it (on the calling thread) and
  // queues it on the sink.
  void OnProduced(absl::Status status, std::unique_ptr<stoker::v1::BatchMessage> batch);
  // The client's set_compression: batches encoded from now on use `choice` (raw when this
  // worker does not offer its codec). INVALID_ARGUMENT naming set_compression.codec/.level.
  absl::Status SetCompression(const stoker::v1::CompressionChoice& choice);
  // The choice in effect.
  stoker::v1::CompressionChoice compression() const;
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
  // Payload bytes handed to the sink so far, by codec name ("none", "lz4", "zstd").
  std::map<std::string, PayloadBytes> payload_bytes() const;

 private:
  using TaskKey = std::tuple<uint64_t, uint32_t, uint64_t>;  // job, epoch, batch index

  const std::shared_ptr<JobContext> job_;
  const uint32_t rank_;
  const std::string client_id_;
  MessagePool* const pool_;
  const std::function<void()> on_capacity_;
  const std::vector<stoker::v1::Compression> offered_;
  const uint32_t producer_threads_;
  PayloadBufferPool* const buffers_;

  mutable absl::Mutex mu_;
  BatchSink* sink_ ABSL_GUARDED_BY(mu_);
  uint64_t credit_ ABSL_GUARDED_BY(mu_) = 0;       // Granted and not yet consumed by a write.
  uint64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;  // Leased and not yet written.
  absl::Time next_poll_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration poll_delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  uint64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sent_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  stoker::v1::CompressionChoice compression_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PayloadBytes> payload_bytes_ ABSL_GUARDED_BY(mu_);
  // Batches handed to the sink and not yet acknowledged, by task (how many times each was sent).
  absl::flat_hash_map<TaskKey, uint32_t> unacked_ ABSL_GUARDED_BY(mu_);
  uint64_t unacked_total_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker

#endif  // STOKER_WORKER_STREAM_SESSION_H_
