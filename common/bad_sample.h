#ifndef STOKER_COMMON_BAD_SAMPLE_H_
#define STOKER_COMMON_BAD_SAMPLE_H_

// Errors that condemn one sample rather than the job (docs/architecture.md, Bad input). A source or
// an op returns BadSampleError(reason, ...) when the bytes of a sample cannot be used; the batch
// producer then replaces the sample deterministically, counts it by reason and logs it once. Any
// other error fails the batch.
//
// The status code is DATA_LOSS and the reason travels as a status payload, so the reason
// survives message prefixes added on the way up (e.g. "pipeline.ops[0] (decode): ...").

#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace stoker {

enum class BadSampleReason {
  kReadError,          // The record could not be read (I/O error, short read).
  kCorruptRecord,      // The record's CRC or framing is wrong.
  kUnsupportedFormat,  // Magic bytes are not JPEG, PNG or WebP.
  kTooLarge,           // The header announces more pixels than the budget, or too many scans.
  kDecodeError,        // The decoder rejected the bytes.
  kMissingField,       // The sample lacks a field the job names (JobSpec.fields).
  kBadAnnotation,      // Its boxes, masks or keypoints do not parse or do not fit its image.
};

// "read_error", "corrupt_record", "unsupported_format", "too_large", "decode_error",
// "missing_field", "bad_annotation": the value
// of the `reason` label of stoker_samples_skipped_total.
std::string_view BadSampleReasonName(BadSampleReason reason);

// A DATA_LOSS status carrying `reason`.
absl::Status BadSampleError(BadSampleReason reason, std::string_view message);

// The reason carried by `status`, or nullopt when it is not a bad-sample error.
std::optional<BadSampleReason> BadSampleReasonOf(const absl::Status& status);

}  // namespace stoker

#endif  // STOKER_COMMON_BAD_SAMPLE_H_
