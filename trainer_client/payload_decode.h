#ifndef STOKER_TRAINER_CLIENT_PAYLOAD_DECODE_H_
#define STOKER_TRAINER_CLIENT_PAYLOAD_DECODE_H_

// The client's side of stream compression (docs/decisions.md, "Stream compression"): a received
// batch whose payload is compressed (header.compression) is decoded into a pooled message before
// the Loader sees it, so a Batch is always a view over raw tensor bytes. The decompression writes
// straight into the pooled message's buffer: the payload's one copy on this side once the receive
// path hands over gRPC's slices without parsing them into `data` (until then the parse copies the
// compressed, smaller bytes first).

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "stoker/v1/worker.pb.h"
#include "trainer_client/message_pool.h"

namespace stoker {

struct DecodedBatch {
  // The batch with a raw payload: `message` itself when it was raw.
  std::shared_ptr<v1::BatchMessage> message;
  // How the payload came (COMPRESSION_NONE when raw); message's header now says NONE.
  v1::Compression codec = v1::COMPRESSION_NONE;
  // Payload bytes as received (compressed) and as decoded.
  uint64_t wire_bytes = 0;
  uint64_t raw_bytes = 0;
  // CPU seconds this thread spent decompressing (0 when raw).
  double decode_seconds = 0;
};

// Decodes `message` (its header moves to the new message). DATA_LOSS when the payload is corrupt
// or truncated, or announces more than `max_raw_bytes` (a batch of the job is never larger);
// INVALID_ARGUMENT for a codec this client does not know. Thread-safe.
absl::StatusOr<DecodedBatch> DecodeReceivedBatch(std::shared_ptr<v1::BatchMessage> message,
                                                 uint64_t max_raw_bytes, MessagePool* pool);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_PAYLOAD_DECODE_H_
