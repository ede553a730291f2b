#ifndef STOKER_WIRE_BATCH_PAYLOAD_H_
#define STOKER_WIRE_BATCH_PAYLOAD_H_

// The tensor bytes of a received batch as they arrived: chunks, in order, that an owner keeps
// alive. gRPC hands a received message over as the transport's read slices (one per HTTP/2 DATA
// frame, 16 KiB by default); the client keeps them rather than copying them into a message
// (wire/grpc_batch_reader.h), so receiving copies nothing. A consumer copies the bytes
// at most once, to where it needs them:
//   - contiguous(): every byte at one address. One chunk is returned as it is; several are
//     gathered on the first call, once, into a buffer from the BufferPool, which the payload
//     keeps (with the chunks) until it dies. The Batch view's data() is this.
//   - CopyTo(out, n): gathers the first n bytes straight into the caller's memory (the CUDA
//   feeder's pinned staging
//     buffer), without the contiguous copy.
//   - PayloadCursor: a piece (a sample) at a time, each where it lies or, when it spans chunks,
//     copied into a small scratch buffer that stays in cache (the client's tail, client_tail.h).
//
// Thread-safe: immutable but for the contiguous copy, made once (absl::call_once).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/types/span.h"
#include "wire/message_pool.h"

namespace stoker {

class BatchPayload {
 public:
  using Chunk = absl::Span<const uint8_t>;

  // The payload is the concatenation of `chunks`, whose bytes `owner` keeps alive. contiguous()
  // gathers into a buffer from `buffers` (a fresh one when null).
  BatchPayload(std::vector<Chunk> chunks, std::shared_ptr<const void> owner,
               std::shared_ptr<BufferPool> buffers);
  // One contiguous chunk.
  BatchPayload(Chunk bytes, std::shared_ptr<const void> owner);

  BatchPayload(const BatchPayload&) = delete;
  BatchPayload& operator=(const BatchPayload&) = delete;

  size_t size() const { return size_; }
  absl::Span<const Chunk> chunks() const { return chunks_; }

  // Every byte at one address, valid while this payload lives (never null, even when empty).
  // The first call gathers when there are several chunks (one copy); later calls return the same.
  absl::Span<const uint8_t> contiguous() const;

  // Copies the first `n` bytes of the payload (a batch's tensor, without the field values after
  // it) to `out`. REQUIRES: n <= size(); `out` holds n bytes.
  void CopyTo(uint8_t* out, size_t n) const;
  // Appends the bytes from `offset` to the end to `out` (a batch's field values, after its
  // tensor). REQUIRES: offset <= size().
  void AppendFrom(size_t offset, std::string* out) const;

 private:
  const std::vector<Chunk> chunks_;
  const std::shared_ptr<const void> owner_;
  const std::shared_ptr<BufferPool> buffers_;
  const size_t size_;
  mutable absl::once_flag gather_once_;
  // Written once, inside gather_once_, and read only after it.
  mutable std::shared_ptr<std::string> gathered_;
};

// Reads a payload's bytes in order, a piece at a time, without gathering the whole payload: a
// piece inside one chunk is returned where it lies, one that spans chunks is copied into the
// caller's scratch buffer.
//
// Thread-compatible; the payload must outlive the cursor.
class PayloadCursor {
 public:
  explicit PayloadCursor(const BatchPayload& payload) : chunks_(payload.chunks()) {}

  // The next `size` bytes, valid while the payload (and, when copied, `scratch`) lives.
  // REQUIRES: `scratch` holds `size` bytes; at least `size` bytes are left.
  const uint8_t* Next(size_t size, uint8_t* scratch);

 private:
  // Moves past exhausted chunks to the next byte.
  void SkipExhausted();

  absl::Span<const BatchPayload::Chunk> chunks_;
  size_t chunk_ = 0;   // index of the chunk holding the next byte
  size_t offset_ = 0;  // the next byte's offset in that chunk
};

// A received BatchMessage: its fields but `data` (in `header`, whose `data` is not read) and the
// payload as it arrived. The trainer client's Batch is a view over one.
struct ReceivedBatch {
  std::shared_ptr<const v1::BatchMessage> header;
  std::shared_ptr<const BatchPayload> payload;

  // A whole message; the payload is message->data(), not copied ({} for null).
  static ReceivedBatch FromMessage(std::shared_ptr<const v1::BatchMessage> message);
};

}  // namespace stoker

#endif  // STOKER_WIRE_BATCH_PAYLOAD_H_
