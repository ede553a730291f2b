#ifndef STOKER_TRACE_JSON_TEXT_H_
#define STOKER_TRACE_JSON_TEXT_H_

// Small pieces of JSON text for the trace and report writers. Pure functions; thread-safe.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace stoker::trace {

// `s` as a JSON string literal, quotes included (", \ and control characters escaped).
std::string JsonQuoted(absl::string_view s);

// Nanoseconds as microseconds with three decimals ("1234.567"): exact, no floating point.
std::string MicrosFromNanos(int64_t ns);

}  // namespace stoker::trace

#endif  // STOKER_TRACE_JSON_TEXT_H_
