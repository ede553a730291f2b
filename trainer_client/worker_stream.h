#ifndef STOKER_TRAINER_CLIENT_WORKER_STREAM_H_
#define STOKER_TRAINER_CLIENT_WORKER_STREAM_H_

// One Worker.StreamBatches stream, behind an interface so that the Loader can be driven by fakes
// in tests. The gRPC implementation (grpc_worker_stream.cc) is a callback-API reactor
// (grpc::ClientBidiReactor) per worker and owns no thread: its reactions run on gRPC's own
// callback threads, a fixed pool shared by every stream of the process, so the client's thread
// count does not grow with the number of workers.
//   - reading: one read is always posted, into a grpc::ByteBuffer; OnReadDone makes it a Batch
//     (wire/grpc_batch_reader.h: the header parsed into a message from `hooks.allocate`, the
//     payload kept as the received slices), passes it to `hooks.on_batch` and posts the next
//     read. A failed read stops writing; gRPC's final status goes once to `hooks.on_done`; a
//     malformed BatchMessage cancels the stream with DATA_LOSS.
//   - writing: Open goes first; then one write at a time, each OnWriteDone starting the next
//     from an outbox of credit (coalesced into one Credit{n}) and acks (batched into one Ack).
//     Close() flushes the outbox and half-closes (WritesDone); the worker then ends the stream.
// GrantCredit / Ack / Close / Cancel never block on the network; Join waits for on_done.
//
// Hooks run on gRPC's callback threads: they must not block for long (taking a short lock is
// fine) and must not call Join.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/tls/tls_config.h"
#include "stoker/v1/worker.pb.h"
#include "trainer_client/batch.h"
#include "wire/message_pool.h"

namespace stoker {

struct WorkerStreamHooks {
  // Returns the message to parse the next batch's header into (e.g. from a MessagePool).
  std::function<std::shared_ptr<v1::BatchMessage>()> allocate;
  // Where a payload that arrived in several pieces is gathered when a consumer asks for it at
  // one address (BatchPayload::contiguous()); null: fresh buffers.
  std::shared_ptr<BufferPool> gather_buffers;
  // Called for every batch received, in order, one call at a time.
  std::function<void(Batch)> on_batch;
  // The client's clock for each Credit sent (Credit.client_clock_ns: 0 while not tracing, the
  // batch timeline's clock offset samples otherwise); null: none.
  std::function<int64_t()> credit_clock;
  // Called exactly once, last, with how the stream ended (OK when the
  // worker ended it normally; errors prefixed with "worker <address>: ").
  std::function<void(const absl::Status&)> on_done;
};

// Thread-safe.
class WorkerStream {
 public:
  virtual ~WorkerStream() = default;
  // Queues permission for `n` more batches. Ignored after Close or once the stream ended.
  virtual void GrantCredit(uint32_t n) = 0;
  // Queues an acknowledgement of a received batch. Ignored after Close or once the stream ended.
  virtual void Ack(const v1::TaskId& task) = 0;
  // Queues a set_compression message (the last one queued wins). Ignored after Close or once
  // the stream ended.
  virtual void SetCompression(const v1::CompressionChoice& choice) = 0;
  // Flushes what is queued and half-closes. The stream ends when the worker finishes it.
  virtual void Close() = 0;
  // Aborts the stream now (on_done gets CANCELLED unless it already ended).
  virtual void Cancel() = 0;
  // Blocks until on_done has returned; no hook runs after that.
  virtual void Join() = 0;
};

// Thread-safe.
class WorkerStreamFactory {
 public:
  virtual ~WorkerStreamFactory() = default;
  // Starts a stream to the worker at `address`, sending `open` first. Never blocks on the
  // network and never runs on_batch or on_done on the calling thread (they come from other
  // threads, possibly before Open returns, so callers may hold their own lock around Open and
  // the hooks wait for it); connection errors arrive later through hooks.on_done. `allocate`
  // may be called before Open returns.
  virtual std::unique_ptr<WorkerStream> Open(const std::string& address, const v1::OpenStream& open,
                                             WorkerStreamHooks hooks) = 0;
};

// Streams over gRPC channels secured by `tls` (the worker's certificate must name role worker,
// so a rogue registration feeds nobody; common/tls/grpc_tls.h), one fresh channel per stream (so a
// restarted worker is redialled at once rather than after a shared channel's reconnect backoff),
// with common/grpc_settings.h keepalive, receiving messages of at most MaxBatchMessageBytes(
// batch_bytes, batch_size) (the job's, `batch_bytes` its largest payload, field columns included:
// LoaderOptions::MaxBatchPayloadBytes; a larger one ends its stream with RESOURCE_EXHAUSTED).
// REQUIRES: tls.Validate() is OK.
std::shared_ptr<WorkerStreamFactory> NewGrpcWorkerStreamFactory(uint64_t batch_bytes,
                                                                uint32_t batch_size,
                                                                const TlsConfig& tls);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_WORKER_STREAM_H_
