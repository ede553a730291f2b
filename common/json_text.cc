#include "common/json_text.h"

#include "absl/strings/str_format.h"

namespace stoker {

std::string JsonQuoted(absl::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string MicrosFromNanos(int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  // Magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64_t.
  const uint64_t magnitude = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : ns;
  return absl::StrFormat("%s%d.%03d", sign, magnitude / 1000, magnitude % 1000);
}

}  // namespace stoker
