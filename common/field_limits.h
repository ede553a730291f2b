#ifndef STOKER_COMMON_FIELD_LIMITS_H_
#define STOKER_COMMON_FIELD_LIMITS_H_

// Bounds on a batch's field columns (BatchHeader.fields; data/sample_fields.h), shared by the
// worker that fills them and the client that sizes its receive limits by them.

#include <algorithm>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/target_fields.h"

namespace stoker {

// The two fields every sample has and that carry no column: the pipeline's tensor and the class
// (data/sample_fields.h has the rest of the names).
inline constexpr absl::string_view kImageField = "image";
inline constexpr absl::string_view kLabelField = "label";

// The most fields a job may name (JobSpec.fields).
inline constexpr uint64_t kMaxJobFields = 64;
// The largest value of one pass-through field of one sample: a larger one is a bad sample
// (too_large). A worker counts every batch it holds at its largest (MaxFieldColumnBytes beside
// the tensor) against --memory-bytes, so this bound is what a job's fields can make a worker
// hold: 64 KiB carries a caption or a sample's JSON annotations many times over, and a batch of
// 256 samples with two fields adds at most 32 MiB.
inline constexpr uint32_t kMaxFieldValueBytes = uint32_t{64} << 10;
// The largest stored value of a typed target (common/target_fields.h) in a record: run-length
// masks of kMaxTargetInstances detailed instances need more than 64 KiB. A stored value is held
// one sample at a time per producer thread; the batch carries its wire form, bounded by
// MaxWireTargetBytes.
inline constexpr uint32_t kMaxStoredTargetValueBytes = uint32_t{4} << 20;

// The largest value the source may read for `field`: a larger one is a bad sample (too_large).
inline uint32_t MaxStoredFieldValueBytes(absl::string_view field) {
  return IsTargetField(field) ? kMaxStoredTargetValueBytes : kMaxFieldValueBytes;
}

// The most bytes the columns of `fields` (names, as in JobSpec.fields; "image" and "label" carry
// no column; at most kMaxJobFields counted) add to a batch of `samples` samples whose output
// images have at most `image_pixels` pixels (height × width) each: the values in the payload
// (a pass-through value at kMaxFieldValueBytes, a typed target at MaxWireTargetBytes), and each
// column's name and offsets in the header. The worker counts its batches by it and the client
// sizes its receive limits by it.
template <typename Names>
uint64_t MaxFieldColumnBytes(uint64_t samples, const Names& fields, uint64_t image_pixels) {
  constexpr uint64_t kNameAndFraming = 128;
  constexpr uint64_t kOffsetBytes = 10;  // A varint of up to 64 bits.
  uint64_t total = 0;
  uint64_t counted = 0;
  for (const auto& name : fields) {
    const absl::string_view field(name);
    if (field == kImageField || field == kLabelField) continue;
    if (++counted > kMaxJobFields) break;
    const uint64_t value_bytes =
        IsTargetField(field) ? MaxWireTargetBytes(field, image_pixels) : kMaxFieldValueBytes;
    total += samples * (value_bytes + kOffsetBytes) + kNameAndFraming;
  }
  return total;
}

}  // namespace stoker

#endif  // STOKER_COMMON_FIELD_LIMITS_H_
