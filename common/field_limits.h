#ifndef STOKER_COMMON_FIELD_LIMITS_H_
#define STOKER_COMMON_FIELD_LIMITS_H_

// Bounds on a batch's pass-through field columns (BatchHeader.fields; data/sample_fields.h),
// shared by the worker that fills them and the client that sizes its receive limits by them.

#include <algorithm>
#include <cstdint>

namespace stoker {

// The most fields a job may name (JobSpec.fields).
inline constexpr uint64_t kMaxJobFields = 64;
// The largest value of one field of one sample: a larger one is a bad sample (too_large). A
// worker counts every batch it holds at its largest (MaxFieldColumnBytes beside the tensor)
// against --memory-bytes, so this bound is what a job's fields can make a worker hold: 64 KiB
// carries a caption or a sample's JSON annotations many times over, and a batch of 256 samples
// with two fields adds at most 32 MiB.
inline constexpr uint32_t kMaxFieldValueBytes = uint32_t{64} << 10;

// The most bytes `columns` field columns (capped at kMaxJobFields) add to a batch of `samples`
// samples: the values in the payload, and a column's name and offsets in the header.
inline uint64_t MaxFieldColumnBytes(uint64_t samples, uint64_t columns) {
  constexpr uint64_t kNameAndFraming = 128;
  constexpr uint64_t kOffsetBytes = 10;  // A varint of up to 64 bits.
  columns = std::min(columns, kMaxJobFields);
  return columns * (samples * (kMaxFieldValueBytes + kOffsetBytes) + kNameAndFraming);
}

}  // namespace stoker

#endif  // STOKER_COMMON_FIELD_LIMITS_H_
