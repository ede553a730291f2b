#include "trace/json_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace stoker::trace {

std::string MicrosFromNanos(int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  // Magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64_t.
  const uint64_t magnitude = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : ns;
  return absl::StrFormat("%s%d.%03d", sign, magnitude / 1000, magnitude % 1000);
}

}  // namespace stoker::trace
