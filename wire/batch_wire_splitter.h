#ifndef STOKER_WIRE_BATCH_WIRE_SPLITTER_H_
#define STOKER_WIRE_BATCH_WIRE_SPLITTER_H_

// Reading a BatchMessage from the bytes gRPC received, without the parse copy of its payload
// (docs/architecture.md, Protocol: the payload is copied at most once on each side).
//
// gRPC hands a received message over as slices (the transport's read buffers, one per HTTP/2
// DATA frame). SplitBatchWire walks the protobuf wire format across them: the bytes of every
// field but `data` (field 2) are copied, as they are, into one small string for protobuf to parse
// (the header, and any field added later, parse exactly as protobuf would: fields in any order,
// a repeated embedded message merged), and `data` is returned as views of the slices, not copied.
// As protobuf does, the last `data` field wins. The worker's wire form
// (worker/batch_wire_encoder.h) sends `data` last; any protobuf encoder's bytes are accepted.
//
// This is the one place the client sees the payload's wire bytes: a decoding step (stream
// compression) goes between SplitBatchWire's payload views and the buffer the Batch exposes.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace stoker {

struct BatchWireParts {
  // Every field but `data`, in wire format: a BatchMessage with no payload.
  std::string header_bytes;
  // The payload: views of the input slices, in order, none empty.
  std::vector<absl::Span<const uint8_t>> payload;
};

// Splits the serialized BatchMessage that is the concatenation of `slices`.
// DATA_LOSS naming the byte offset when the bytes are not a well-formed message: a truncated
// varint, tag or length-delimited field, a varint over 10 bytes, field number 0 or over 2^29 - 1
// (protobuf's limit), a group or an unknown wire type, or `data` with a wire type other than
// length-delimited.
absl::StatusOr<BatchWireParts> SplitBatchWire(absl::Span<const absl::Span<const uint8_t>> slices);

}  // namespace stoker

#endif  // STOKER_WIRE_BATCH_WIRE_SPLITTER_H_
