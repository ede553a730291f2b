#include "pack/input_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "data/storage.h"
#include "data/storage_backend.h"

namespace stoker {

absl::Status InputChecker::Check(absl::Span<const uint8_t> bytes) {
  ASSIGN_OR_RETURN(EncodedHeader header, decoder_.ReadHeader(bytes, limits_));
  pixels_.Reshape(ScaledSize(header, 1, 3));
  return decoder_.Decode(bytes, pixels_.view());
}

absl::StatusOr<EncodedHeader> InputChecker::ReadHeader(absl::Span<const uint8_t> bytes) {
  return decoder_.ReadHeader(bytes, limits_);
}

std::string SummarizeSkipped(const std::vector<SkippedInput>& skipped) {
  std::map<std::string, int> counts;
  for (const SkippedInput& input : skipped) ++counts[input.reason];
  return absl::StrJoin(counts, ", ", absl::PairFormatter("="));
}

absl::Status WriteSkipReport(const Storage& storage, const std::vector<SkippedInput>& skipped,
                             const std::string& location) {
  std::string text;
  for (const SkippedInput& input : skipped) {
    absl::StrAppend(&text, input.path, "\t", input.reason, "\t", input.message, "\n");
  }
  return storage.Write(location, absl::Span<const uint8_t>(
                                     reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace stoker
