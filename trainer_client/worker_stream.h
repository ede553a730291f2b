#ifndef STOKER_TRAINER_CLIENT_WORKER_STREAM_H_
#define STOKER_TRAINER_CLIENT_WORKER_STREAM_H_

// One Worker.StreamBatches stream, behind an interface so that the Loader can be driven by fakes
// in tests. The gRPC implementation (grpc_worker_stream.cc) runs one sync ClientReaderWriter per
// worker with two threads:
//   - a reader thread: starts the call (which may block while connecting), starts the writer,
//     then Read()s BatchMessages into messages from `hooks.allocate` and passes each to
//     `hooks.on_batch`. When Read fails it stops the writer, calls Finish() and reports the
//     status once through `hooks.on_done`.
//   - a writer thread: sends Open first, then drains an outbox of credit (coalesced into one
//     Credit{n}) and acks (batched into one Ack) — gRPC allows one read and one write at a time,
//     and only this thread writes. Close() flushes the outbox and half-closes (WritesDone); the
//     worker then ends the stream.
// GrantCredit / Ack / Close / Cancel never block on the network.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

struct WorkerStreamHooks {
  // Returns the message to parse the next batch into (e.g. from a MessagePool).
  std::function<std::shared_ptr<v1::BatchMessage>()> allocate;
  // Called on the reader thread for every batch received, in order.
  std::function<void(std::shared_ptr<v1::BatchMessage>)> on_batch;
  // Called exactly once, last, on the reader thread, with how the stream ended (OK when the
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
  // Flushes what is queued and half-closes. The stream ends when the worker finishes it.
  virtual void Close() = 0;
  // Aborts the stream now (on_done gets CANCELLED unless it already ended).
  virtual void Cancel() = 0;
  // Blocks until on_done has returned and the stream's threads have exited.
  virtual void Join() = 0;
};

// Thread-safe.
class WorkerStreamFactory {
 public:
  virtual ~WorkerStreamFactory() = default;
  // Starts a stream to the worker at `address`, sending `open` first. Never blocks on the
  // network and never calls a hook before returning: connection errors arrive later through
  // hooks.on_done (callers may hold their own lock around Open).
  virtual std::unique_ptr<WorkerStream> Open(const std::string& address,
                                             const v1::OpenStream& open,
                                             WorkerStreamHooks hooks) = 0;
};

// Streams over insecure gRPC channels, one fresh channel per stream (so a restarted worker is
// redialled at once rather than after a shared channel's reconnect backoff), with
// common/grpc_settings.h keepalive, receiving messages of at most MaxBatchMessageBytes(
// batch_bytes, batch_size) (the job's; a larger one ends its stream with RESOURCE_EXHAUSTED).
std::shared_ptr<WorkerStreamFactory> NewGrpcWorkerStreamFactory(uint64_t batch_bytes,
                                                                uint32_t batch_size);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_WORKER_STREAM_H_
