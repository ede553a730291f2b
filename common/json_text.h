#ifndef STOKER_COMMON_JSON_TEXT_H_
#define STOKER_COMMON_JSON_TEXT_H_

// Pieces of JSON text for the hand-written JSON writers (JSON logs, bench reports, traces and
// the bottleneck report). Pure functions; thread-safe.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace stoker {

// `s` as a JSON string literal, quotes included: " and \ escaped, \n and \t as themselves, any
// other control character as \u00XX. Bytes >= 0x80 pass through (UTF-8 stays UTF-8).
std::string JsonQuoted(absl::string_view s);

// Nanoseconds as microseconds with three decimals ("1234.567"): exact, no floating point (the
// Chrome trace format's unit).
std::string MicrosFromNanos(int64_t ns);

}  // namespace stoker

#endif  // STOKER_COMMON_JSON_TEXT_H_
