#include "trace/chrome_trace_validator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace stoker::trace {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// A complete event's extent in nanoseconds (ts and dur are microseconds with ns decimals).
struct Extent {
  int64_t start_ns;
  int64_t end_ns;
  size_t index;
};

absl::Status EventError(size_t index, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("traceEvents[", index, "]: ", what));
}

absl::StatusOr<double> NumberField(const Struct& event, const char* key, size_t index) {
  const auto it = event.fields().find(key);
  if (it == event.fields().end() || it->second.kind_case() != Value::kNumberValue ||
      !std::isfinite(it->second.number_value())) {
    return EventError(index, absl::StrCat("no numeric \"", key, "\""));
  }
  return it->second.number_value();
}

absl::StatusOr<std::string> StringField(const Struct& event, const char* key, size_t index) {
  const auto it = event.fields().find(key);
  if (it == event.fields().end() || it->second.kind_case() != Value::kStringValue) {
    return EventError(index, absl::StrCat("no string \"", key, "\""));
  }
  return it->second.string_value();
}

int64_t Nanos(double micros) { return std::llround(micros * 1000.0); }

absl::Status CheckTrackDisjoint(std::vector<Extent>* extents) {
  std::sort(extents->begin(), extents->end(), [](const Extent& a, const Extent& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
  for (size_t i = 1; i < extents->size(); ++i) {
    const Extent& previous = (*extents)[i - 1];
    const Extent& current = (*extents)[i];
    if (current.start_ns < previous.end_ns) {
      return EventError(current.index, absl::StrCat("overlaps traceEvents[", previous.index,
                                                    "] on the same pid and tid"));
    }
  }
  return absl::OkStatus();
}

// Checks one event and records what the summary and the overlap check need.
absl::Status CheckEvent(const Struct& event, size_t index, ChromeTraceSummary* summary,
                        std::map<std::pair<int64_t, int64_t>, std::vector<Extent>>* tracks) {
  ASSIGN_OR_RETURN(const std::string name, StringField(event, "name", index));
  ASSIGN_OR_RETURN(const std::string ph, StringField(event, "ph", index));
  ASSIGN_OR_RETURN(const double ts, NumberField(event, "ts", index));
  ASSIGN_OR_RETURN(const double pid, NumberField(event, "pid", index));
  ASSIGN_OR_RETURN(const double tid, NumberField(event, "tid", index));
  const auto pid_key = static_cast<int64_t>(pid);
  if (ph == "M" && name == "process_name") {
    const auto args = event.fields().find("args");
    if (args == event.fields().end() || args->second.kind_case() != Value::kStructValue) {
      return EventError(index, "process_name without \"args\"");
    }
    ASSIGN_OR_RETURN(summary->process_names[pid_key],
                     StringField(args->second.struct_value(), "name", index));
  } else if (ph == "X") {
    ASSIGN_OR_RETURN(const double dur, NumberField(event, "dur", index));
    if (dur < 0) return EventError(index, absl::StrCat("\"dur\" ", dur, " is negative"));
    (*tracks)[{pid_key, static_cast<int64_t>(tid)}].push_back(
        Extent{Nanos(ts), Nanos(ts) + Nanos(dur), index});
    ++summary->complete_events[pid_key];
  } else if (ph == "i") {
    ++summary->instant_events;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ChromeTraceSummary> ValidateChromeTrace(absl::string_view json) {
  Struct document;
  const auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), &document);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace: not a JSON object: ", parsed.message().ToString()));
  }
  const auto events = document.fields().find("traceEvents");
  if (events == document.fields().end() || events->second.kind_case() != Value::kListValue) {
    return absl::InvalidArgumentError("trace: no \"traceEvents\" array");
  }
  ChromeTraceSummary summary;
  std::map<std::pair<int64_t, int64_t>, std::vector<Extent>> tracks;
  const auto& list = events->second.list_value().values();
  for (int i = 0; i < list.size(); ++i) {
    if (list[i].kind_case() != Value::kStructValue) {
      return EventError(i, "not an object");
    }
    RETURN_IF_ERROR(CheckEvent(list[i].struct_value(), i, &summary, &tracks));
  }
  for (auto& [track, extents] : tracks) {
    RETURN_IF_ERROR(CheckTrackDisjoint(&extents));
    if (!summary.process_names.contains(track.first)) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace: pid ", track.first, " has no process_name metadata event"));
    }
  }
  return summary;
}

}  // namespace stoker::trace
