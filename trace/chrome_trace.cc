#include "trace/chrome_trace.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json_text.h"

namespace stoker::trace {
namespace {

// The spans of one thread, split into lanes whose spans are disjoint (greedy interval
// partitioning on start time: each span goes to the first lane free at its start).
std::vector<std::vector<const Span*>> PackLanes(std::vector<const Span*> spans) {
  std::stable_sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns < b->end_ns;
  });
  std::vector<std::vector<const Span*>> lanes;
  std::vector<int64_t> lane_end;
  for (const Span* span : spans) {
    size_t lane = 0;
    // Instants stay on the thread's own lane: they have no extent to collide.
    while (!IsInstant(span->stage) && lane < lanes.size() && lane_end[lane] > span->start_ns) {
      ++lane;
    }
    if (lane == lanes.size()) {
      lanes.emplace_back();
      lane_end.push_back(std::numeric_limits<int64_t>::min());
    }
    lanes[lane].push_back(span);
    lane_end[lane] = std::max(lane_end[lane], span->end_ns);
  }
  return lanes;
}

std::string SpanName(const Span& span, const std::vector<std::string>& op_names) {
  const bool named = span.stage == Stage::kOp || span.stage == Stage::kOpGroup;
  if (named && span.name_id != 0 && span.name_id < op_names.size()) {
    return op_names[span.name_id];
  }
  return std::string(StageName(span.stage));
}

std::string MetadataEvent(absl::string_view kind, int pid, int tid, absl::string_view args) {
  return absl::StrCat("{\"name\":", JsonQuoted(kind), ",\"ph\":\"M\",\"ts\":0,\"pid\":", pid,
                      ",\"tid\":", tid, ",\"args\":{", args, "}}");
}

std::string SpanEvent(const Span& span, const TraceProcess& process, int pid, int tid,
                      int64_t origin_ns) {
  std::string event = absl::StrCat("{\"name\":", JsonQuoted(SpanName(span, process.op_names)),
                                   ",\"cat\":", JsonQuoted(StageName(span.stage)));
  if (IsInstant(span.stage)) {
    absl::StrAppend(&event, ",\"ph\":\"i\",\"s\":\"t\"");
  } else {
    absl::StrAppend(&event, ",\"ph\":\"X\",\"dur\":", MicrosFromNanos(span.end_ns - span.start_ns));
  }
  absl::StrAppend(&event, ",\"ts\":", MicrosFromNanos(span.start_ns - origin_ns), ",\"pid\":", pid,
                  ",\"tid\":", tid, ",\"args\":{\"job\":", span.task.job_id,
                  ",\"epoch\":", span.task.epoch, ",\"batch\":", span.task.batch_index, "}}");
  return event;
}

std::string ThreadName(const TraceProcess& process, uint32_t thread_id, size_t lane) {
  const auto it = process.thread_names.find(thread_id);
  std::string name =
      it != process.thread_names.end() ? it->second : absl::StrCat("thread ", thread_id);
  if (lane > 0) absl::StrAppend(&name, " +", lane);
  return name;
}

// Appends the events of one process; its tracks are numbered from 1 in thread id order.
void AppendProcess(const TraceProcess& process, int pid, int64_t origin_ns,
                   std::vector<std::string>* events) {
  events->push_back(MetadataEvent(
      "process_name", pid, 0,
      absl::StrCat("\"name\":", JsonQuoted(process.name),
                   ",\"clock_error_bound_us\":", MicrosFromNanos(process.clock_error_bound_ns))));
  std::map<uint32_t, std::vector<const Span*>> by_thread;
  for (const Span& span : process.spans) by_thread[span.thread_id].push_back(&span);
  int tid = 0;
  for (auto& [thread_id, spans] : by_thread) {
    const std::vector<std::vector<const Span*>> lanes = PackLanes(std::move(spans));
    for (size_t lane = 0; lane < lanes.size(); ++lane) {
      ++tid;
      events->push_back(MetadataEvent(
          "thread_name", pid, tid,
          absl::StrCat("\"name\":", JsonQuoted(ThreadName(process, thread_id, lane)))));
      for (const Span* span : lanes[lane]) {
        events->push_back(SpanEvent(*span, process, pid, tid, origin_ns));
      }
    }
  }
}

}  // namespace

std::string WriteChromeTrace(absl::Span<const TraceProcess> processes) {
  int64_t origin_ns = std::numeric_limits<int64_t>::max();
  for (const TraceProcess& process : processes) {
    for (const Span& span : process.spans) origin_ns = std::min(origin_ns, span.start_ns);
  }
  if (origin_ns == std::numeric_limits<int64_t>::max()) origin_ns = 0;
  std::vector<std::string> events;
  for (size_t i = 0; i < processes.size(); ++i) {
    AppendProcess(processes[i], static_cast<int>(i) + 1, origin_ns, &events);
  }
  std::string json = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    absl::StrAppend(&json, i == 0 ? "\n" : ",\n", events[i]);
  }
  return json + "\n]}\n";
}

std::vector<uint16_t> MergeNames(const TraceProcess& from, TraceProcess* into) {
  if (into->op_names.empty()) into->op_names.emplace_back();
  std::vector<uint16_t> renumbered(from.op_names.size(), 0);
  for (size_t id = 1; id < from.op_names.size(); ++id) {
    const auto it = std::find(into->op_names.begin() + 1, into->op_names.end(), from.op_names[id]);
    if (it != into->op_names.end()) {
      renumbered[id] = static_cast<uint16_t>(it - into->op_names.begin());
    } else if (into->op_names.size() < kMaxNamesPerProcess) {
      renumbered[id] = static_cast<uint16_t>(into->op_names.size());
      into->op_names.push_back(from.op_names[id]);
    }
  }
  for (const auto& [id, name] : from.thread_names) {
    if (into->thread_names.size() >= kMaxNamesPerProcess) break;
    into->thread_names.try_emplace(id, name);
  }
  into->clock_error_bound_ns = std::max(into->clock_error_bound_ns, from.clock_error_bound_ns);
  return renumbered;
}

void MergeProcess(const TraceProcess& from, TraceProcess* into) {
  const std::vector<uint16_t> renumbered = MergeNames(from, into);
  for (Span span : from.spans) {
    span.name_id = span.name_id < renumbered.size() ? renumbered[span.name_id] : 0;
    into->spans.push_back(span);
  }
}

}  // namespace stoker::trace
