#ifndef STOKER_WORKER_OUTGOING_BATCH_H_
#define STOKER_WORKER_OUTGOING_BATCH_H_

// A produced batch on its way to a client stream, and its optional compression
// (docs/decisions.md, "Stream compression").
//
// The producer writes the tensor into a pooled message's `data`; that buffer is never replaced,
// so the next batch produced into the message reuses its pages. A compressed batch carries its
// encoded payload in a pooled PayloadBuffer beside the message, and the wire (batch_wire.h) sends
// those bytes as field `data` instead of the raw ones: no copy either way beyond the compressor's
// own pass.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/payload_codec.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

// Move-only value.
struct OutgoingBatch {
  // The header and the raw tensor (data), which returns to the message pool once sent.
  std::unique_ptr<v1::BatchMessage> message;
  // The payload sent instead of message->data(), encoded as header.compression says; null when
  // the payload goes raw.
  std::unique_ptr<PayloadBuffer> encoded;

  // Bytes of the payload as sent, and as the tensor is.
  uint64_t wire_bytes() const;
  uint64_t raw_bytes() const;
};

// A free list of PayloadBuffers that keep their capacity. Thread-safe.
class PayloadBufferPool {
 public:
  using Recycler = std::function<void(std::unique_ptr<PayloadBuffer>)>;

  explicit PayloadBufferPool(size_t max_pooled);
  std::unique_ptr<PayloadBuffer> Get();
  // Put for owners that may outlive the pool (a gRPC slice the transport still writes).
  Recycler recycler() const;

 private:
  struct FreeList {
    explicit FreeList(size_t max) : max_pooled(max) {}
    const size_t max_pooled;
    absl::Mutex mu;
    std::vector<std::unique_ptr<PayloadBuffer>> free ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<FreeList> free_;
};

// Encodes `message`'s payload as `choice` says, into a buffer from `pool`, and records it in the
// header (compression, uncompressed_bytes, compress_seconds: the calling thread's CPU time).
// A raw choice leaves the payload as it is (compression NONE). Errors of CompressPayload.
absl::StatusOr<OutgoingBatch> EncodeBatch(std::unique_ptr<v1::BatchMessage> message,
                                          const v1::CompressionChoice& choice,
                                          PayloadBufferPool* pool);

}  // namespace stoker

#endif  // STOKER_WORKER_OUTGOING_BATCH_H_
