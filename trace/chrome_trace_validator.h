#ifndef STOKER_TRACE_CHROME_TRACE_VALIDATOR_H_
#define STOKER_TRACE_CHROME_TRACE_VALIDATOR_H_

// Checks that a JSON document is a batch timeline in the Chrome Trace Event format as
// WriteChromeTrace writes it (chrome_trace.h), for tests and for `stoker-ctl trace`'s output:
//
// - the document is an object with a "traceEvents" array of objects;
// - every event has a string "name" and "ph", and numeric "ts", "pid" and "tid";
// - complete events ("X") have a numeric "dur" >= 0;
// - complete events of one track (pid, tid) do not overlap (one may start where another ends);
// - every pid with events is named by a "process_name" metadata event.
//
// INVALID_ARGUMENT naming the first offending event ("traceEvents[12]: ...") or the document.
// Pure function; thread-safe.

#include <cstdint>
#include <string>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker::trace {

struct ChromeTraceSummary {
  // Process names by pid (from "process_name" metadata events).
  absl::btree_map<int64_t, std::string> process_names;
  // Complete events ("X") by pid.
  absl::btree_map<int64_t, int64_t> complete_events;
  // Instant events ("i") in all.
  int64_t instant_events = 0;
};

absl::StatusOr<ChromeTraceSummary> ValidateChromeTrace(absl::string_view json);

}  // namespace stoker::trace

#endif  // STOKER_TRACE_CHROME_TRACE_VALIDATOR_H_
