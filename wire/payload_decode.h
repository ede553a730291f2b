#ifndef STOKER_WIRE_PAYLOAD_DECODE_H_
#define STOKER_WIRE_PAYLOAD_DECODE_H_

// The client's side of stream compression
// (docs/decisions/0029-stream-compression-formats-negotiation-both-sides.md): a received batch
// whose payload is compressed (header.compression) is decoded into a pooled buffer before the
// Loader sees it, so a Batch is always a view over raw tensor bytes. The received payload stays in
// gRPC's slices (wire/batch_payload.h); a compressed one is gathered (a copy of the
// compressed, smaller bytes, none when it arrived in one slice) and decompressed straight into the
// pooled buffer: the raw bytes are written once.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "stoker/v1/worker.pb.h"
#include "wire/batch_payload.h"
#include "wire/message_pool.h"

namespace stoker {

struct DecodedBatch {
  // The batch with a raw payload: the received one itself when it was raw; else a copy of its
  // header that says COMPRESSION_NONE over the decoded bytes.
  ReceivedBatch batch;
  // How the payload came (COMPRESSION_NONE when raw).
  v1::Compression codec = v1::COMPRESSION_NONE;
  // Payload bytes as received (compressed) and as decoded.
  uint64_t wire_bytes = 0;
  uint64_t raw_bytes = 0;
  // CPU seconds this thread spent decompressing (0 when raw).
  double decode_seconds = 0;
};

// Decodes `received`, a batch from the worker at address `worker`, which errors name. DATA_LOSS
// when the header does not describe the payload (CheckBatchHeader, batch_check.h: checked before
// any buffer is sized), when a typed target column is ragged (CheckTargetColumns,
// target_check.h), when the payload is corrupt or truncated, or announces more than
// `max_raw_bytes` (a batch of the job is never larger); INVALID_ARGUMENT for a codec this client
// does not know. The decoded header comes from `headers`, the decoded bytes from `buffers`.
// Thread-safe.
absl::StatusOr<DecodedBatch> DecodeReceivedBatch(ReceivedBatch received, absl::string_view worker,
                                                 uint64_t max_raw_bytes, MessagePool* headers,
                                                 BufferPool* buffers);

}  // namespace stoker

#endif  // STOKER_WIRE_PAYLOAD_DECODE_H_
