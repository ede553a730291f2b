#ifndef STOKER_WIRE_BATCH_CHECK_H_
#define STOKER_WIRE_BATCH_CHECK_H_

// The client trusts no header (docs/security.md, "Authenticated peers"): a received batch's
// header is checked against its payload before any view of the tensor is made (a Batch's
// elements(), the CUDA feeder's copy, a DLPack capsule). A faulty or hostile worker's header must
// not make the trainer read past the bytes it received.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

// Bytes of one element of `dtype`; 0 for DTYPE_UNSPECIFIED or a value outside the enum.
size_t DTypeBytes(v1::DType dtype);

// Checks that `header` describes a payload of exactly `payload_bytes` bytes (the raw payload's
// size, or a compressed payload's announced uncompressed size): a known dtype and layout, four
// non-negative dimensions whose product times the element size neither overflows 64 bits nor
// differs from the tensor's bytes (TensorBytes), one sample index and one label per sample
// (shape[0]), soft labels a whole number of rows, and field columns that tile the rest of the
// payload: each with shape[0] + 1 non-decreasing offsets, the first column starting where the
// tensor ends, each next one where the one before ends, the last ending at `payload_bytes`.
// DATA_LOSS naming the field (`header.shape`, `header.labels`, `header.fields[1] ("text")`...).
absl::Status CheckBatchHeader(const v1::BatchHeader& header, uint64_t payload_bytes);

// The bytes of the payload that are the tensor: all of it without field columns, else up to where
// the first column starts. Meaningful once CheckBatchHeader accepted the header.
uint64_t TensorBytes(const v1::BatchHeader& header, uint64_t payload_bytes);

}  // namespace stoker

#endif  // STOKER_WIRE_BATCH_CHECK_H_
