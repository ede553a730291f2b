#ifndef STOKER_COMMON_JSON_TEXT_H_
#define STOKER_COMMON_JSON_TEXT_H_

// JSON string literals for the hand-written JSON writers (JSON logs, bench reports, traces).
// Pure functions; thread-safe.

#include <string>

#include "absl/strings/string_view.h"

namespace stoker {

// `s` as a JSON string literal, quotes included: " and \ escaped, \n and \t as themselves, any
// other control character as \u00XX. Bytes >= 0x80 pass through (UTF-8 stays UTF-8).
std::string JsonQuoted(absl::string_view s);

}  // namespace stoker

#endif  // STOKER_COMMON_JSON_TEXT_H_
