#include "common/bad_sample.h"

#include <string>

#include "absl/strings/cord.h"

namespace stoker {
namespace {

constexpr absl::string_view kPayloadUrl = "type.stoker.dev/stoker.BadSampleReason";

constexpr BadSampleReason kAllReasons[] = {
    BadSampleReason::kReadError,         BadSampleReason::kCorruptRecord,
    BadSampleReason::kUnsupportedFormat, BadSampleReason::kTooLarge,
    BadSampleReason::kDecodeError,       BadSampleReason::kMissingField,
    BadSampleReason::kBadAnnotation};

}  // namespace

std::string_view BadSampleReasonName(BadSampleReason reason) {
  switch (reason) {
    case BadSampleReason::kReadError:
      return "read_error";
    case BadSampleReason::kCorruptRecord:
      return "corrupt_record";
    case BadSampleReason::kUnsupportedFormat:
      return "unsupported_format";
    case BadSampleReason::kTooLarge:
      return "too_large";
    case BadSampleReason::kDecodeError:
      return "decode_error";
    case BadSampleReason::kMissingField:
      return "missing_field";
    case BadSampleReason::kBadAnnotation:
      return "bad_annotation";
  }
  return "unknown";
}

absl::Status BadSampleError(BadSampleReason reason, std::string_view message) {
  absl::Status status = absl::DataLossError(absl::string_view(message.data(), message.size()));
  const std::string_view name = BadSampleReasonName(reason);
  status.SetPayload(kPayloadUrl, absl::Cord(absl::string_view(name.data(), name.size())));
  return status;
}

std::optional<BadSampleReason> BadSampleReasonOf(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kDataLoss) return std::nullopt;
  const auto payload = status.GetPayload(kPayloadUrl);  // An absl::optional here.
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  for (BadSampleReason reason : kAllReasons) {
    if (text == BadSampleReasonName(reason)) return reason;
  }
  return std::nullopt;
}

}  // namespace stoker
