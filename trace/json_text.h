#ifndef STOKER_TRACE_JSON_TEXT_H_
#define STOKER_TRACE_JSON_TEXT_H_

// Small pieces of JSON text for the trace and report writers. Pure functions; thread-safe.

#include <cstdint>
#include <string>

#include "common/json_text.h"  // JsonQuoted, for the trace's writers

namespace stoker::trace {

// Nanoseconds as microseconds with three decimals ("1234.567"): exact, no floating point.
std::string MicrosFromNanos(int64_t ns);

}  // namespace stoker::trace

#endif  // STOKER_TRACE_JSON_TEXT_H_
