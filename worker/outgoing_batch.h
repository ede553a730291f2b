#ifndef STOKER_WORKER_OUTGOING_BATCH_H_
#define STOKER_WORKER_OUTGOING_BATCH_H_

// A produced batch on its way to a client stream, and its optional compression
// (docs/decisions/0029-stream-compression-formats-negotiation-both-sides.md).
//
// The producer writes the tensor into a pooled message's `data`; that buffer is never replaced,
// so the next batch produced into the message reuses its pages. A compressed batch carries its
// encoded payload in a pooled PayloadBuffer beside the message, and the wire (batch_wire_encoder.h)
// sends those bytes as field `data` instead of the raw ones: no copy either way beyond the
// compressor's own pass.

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "common/payload_codec.h"
#include "common/recycling_pool.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

// Move-only value.
struct OutgoingBatch {
  // The header and the raw tensor (data), which returns to the message pool once sent.
  std::unique_ptr<v1::BatchMessage> message;
  // The payload sent instead of message->data(), encoded as header.compression says; null when
  // the payload goes raw.
  std::unique_ptr<PayloadBuffer> encoded;
  // A traced batch (header.trace set): when it was queued for the stream, for its queue span.
  int64_t queued_ns = 0;

  // Bytes of the payload as sent, and as the tensor is.
  uint64_t wire_bytes() const;
  uint64_t raw_bytes() const;
};

// Encoded payloads that keep their capacity.
using PayloadBufferPool = RecyclingPool<PayloadBuffer>;

// Encodes `message`'s payload as `choice` says, into a buffer from `pool`, and records it in the
// header (compression, uncompressed_bytes, compress_seconds: the calling thread's CPU time).
// A raw choice leaves the payload as it is (compression NONE). Errors of CompressPayload.
absl::StatusOr<OutgoingBatch> EncodeBatch(std::unique_ptr<v1::BatchMessage> message,
                                          const v1::CompressionChoice& choice,
                                          PayloadBufferPool* pool);

}  // namespace stoker

#endif  // STOKER_WORKER_OUTGOING_BATCH_H_
