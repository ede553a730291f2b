#ifndef STOKER_PACK_INPUT_CHECK_H_
#define STOKER_PACK_INPUT_CHECK_H_

// What stoker-pack checks before it packs an input: the worker's own decode gates
// (augment/kernels/decode.h: format by magic bytes, pixel budget from the header, JPEG scan
// count) and then a full decode, so an input a worker would reject (an empty file, a text file
// named .jpg, a truncated JPEG, random bytes) is skipped at packing time instead of being
// replaced mid-training. The reasons are the worker's (stoker_samples_skipped_total{reason}),
// plus "empty" and "read_error".

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "augment/kernels/decode.h"
#include "image/image.h"

namespace stoker {

class Storage;  // data/storage_backend.h: what inputs and outputs are read and written through.

// One skipped input.
struct SkippedInput {
  std::string path;
  std::string reason;   // "unsupported_format", "too_large", "decode_error", "empty", ...
  std::string message;  // Never the file's content.
};

// Checks inputs one at a time, reusing its decoder and pixel buffer. Thread-compatible: one per
// thread.
class InputChecker {
 public:
  explicit InputChecker(const DecodeLimits& limits) : limits_(limits) {}
  // OK when a worker's decode op would accept `bytes`; otherwise the bad-sample error
  // (common/bad_sample.h) the worker would get.
  absl::Status Check(absl::Span<const uint8_t> bytes);
  // The header of `bytes` (its size), through the same gates; the bad-sample error otherwise.
  absl::StatusOr<EncodedHeader> ReadHeader(absl::Span<const uint8_t> bytes);

 private:
  const DecodeLimits limits_;
  ImageDecoder decoder_;
  ImageBuffer pixels_;
};

// "reason=count, ..." sorted by reason, for the summary line.
std::string SummarizeSkipped(const std::vector<SkippedInput>& skipped);

// Writes "path<TAB>reason<TAB>message" lines to `location` (local or s3://) through `storage`.
// Errors as Storage::Write.
absl::Status WriteSkipReport(const Storage& storage, const std::vector<SkippedInput>& skipped,
                             const std::string& location);

}  // namespace stoker

#endif  // STOKER_PACK_INPUT_CHECK_H_
