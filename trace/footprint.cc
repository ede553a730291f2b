#include "trace/footprint.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "trace/span_recorder.h"

namespace stoker::trace {
namespace {

struct TaskKeyHash {
  size_t operator()(const TaskKey& task) const { return TaskHash(task); }
};
using TaskSet = absl::flat_hash_set<TaskKey, TaskKeyHash>;

// The consumer's handoff and step spans, in time order.
std::vector<Span> ConsumerSpans(const TraceProcess& rank) {
  std::vector<Span> spans;
  for (const Span& span : rank.spans) {
    if (span.stage == Stage::kHandoff || span.stage == Stage::kConsumerStep) spans.push_back(span);
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
  return spans;
}

}  // namespace

absl::StatusOr<RankFootprint> FootprintFromTimeline(absl::Span<const TraceProcess> timeline,
                                                    absl::string_view rank_process, uint32_t rank,
                                                    const FootprintOptions& options) {
  const auto process = std::find_if(timeline.begin(), timeline.end(),
                                    [&](const TraceProcess& p) { return p.name == rank_process; });
  if (process == timeline.end()) {
    return absl::NotFoundError(
        absl::StrCat("rank_process: no process named \"", rank_process, "\" in the timeline"));
  }
  const std::vector<Span> consumer = ConsumerSpans(*process);
  if (std::none_of(consumer.begin(), consumer.end(),
                   [](const Span& span) { return span.stage == Stage::kHandoff; })) {
    return absl::FailedPreconditionError(
        absl::StrCat(rank_process, " has no handoff span: its consumer took no traced batch"));
  }
  RankFootprint footprint;
  footprint.rank = rank;
  int64_t wait_ns = 0;
  int64_t step_ns = 0;
  TaskSet late;
  const Span* previous_step = nullptr;
  for (const Span& span : consumer) {
    if (span.stage == Stage::kConsumerStep) {
      step_ns += span.end_ns - span.start_ns;
      previous_step = &span;
      continue;
    }
    if (previous_step == nullptr) continue;  // the first batch: no step before it to wait from
    const int64_t wait = std::max<int64_t>(span.start_ns - previous_step->end_ns, 0);
    wait_ns += wait;
    if (wait >= options.late_wait_ns) late.insert(span.task);
    previous_step = nullptr;
  }
  const int64_t window_ns = consumer.back().end_ns - consumer.front().start_ns;
  if (window_ns > 0) {
    footprint.data_wait_share = std::min(1.0, static_cast<double>(wait_ns) / window_ns);
    footprint.gpu_step_share = std::min(1.0, static_cast<double>(step_ns) / window_ns);
  }
  for (const TraceProcess& each : timeline) {
    for (const Span& span : each.spans) {
      if (IsInstant(span.stage) || !late.contains(span.task)) continue;
      footprint.late_stage_seconds[StageIndex(span.stage)] += (span.end_ns - span.start_ns) * 1e-9;
    }
  }
  return footprint;
}

}  // namespace stoker::trace
