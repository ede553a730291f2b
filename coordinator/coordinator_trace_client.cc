#include "coordinator/coordinator_trace_client.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trace/trace_proto.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

// The sort key of a process: its role (coordinator, worker, rank, other), then its rank number
// or its name.
std::tuple<int, uint64_t, std::string> OrderOf(const trace::TraceProcess& process) {
  uint64_t rank = 0;
  if (process.name == "coordinator") return {0, 0, ""};
  if (absl::StartsWith(process.name, "worker ")) return {1, 0, process.name};
  if (absl::StartsWith(process.name, "rank ") &&
      absl::SimpleAtoi(absl::string_view(process.name).substr(5), &rank)) {
    return {2, rank, ""};
  }
  return {3, 0, process.name};
}

}  // namespace

void SortTraceProcesses(std::vector<trace::TraceProcess>* processes) {
  std::stable_sort(processes->begin(), processes->end(),
                   [](const trace::TraceProcess& a, const trace::TraceProcess& b) {
                     return OrderOf(a) < OrderOf(b);
                   });
}

absl::StatusOr<CollectedTrace> CollectTrace(CoordinatorClient& coordinator,
                                            const CollectTraceOptions& options) {
  pb::StartTraceRequest start;
  start.set_job_id(options.job_id);
  start.set_seconds(options.seconds);
  start.set_sample_one_in(options.sample_one_in);
  RETURN_IF_ERROR(coordinator.StartTrace(start).status());
  const absl::Time window_end = options.clock->Now() + absl::Seconds(options.seconds);
  options.clock->SleepFor(absl::Seconds(options.seconds));

  CollectedTrace collected;
  absl::flat_hash_map<std::string, size_t> index;
  pb::GetTraceRequest get;
  get.set_job_id(options.job_id);
  get.set_max_spans(options.page_spans);
  while (true) {
    ASSIGN_OR_RETURN(pb::GetTraceResponse page, coordinator.GetTrace(get));
    size_t spans = 0;
    for (const pb::TraceProcessSpans& message : page.processes()) {
      const trace::TraceProcess process = trace::FromProcessSpans(message);
      spans += process.spans.size();
      auto [at, added] = index.try_emplace(process.name, collected.processes.size());
      if (added) collected.processes.emplace_back().name = process.name;
      trace::MergeProcess(process, &collected.processes[at->second]);
    }
    collected.dropped_spans = page.dropped_spans();
    if (page.next_page_token() == 0) break;
    get.set_page_token(page.next_page_token());
    if (spans > 0) continue;  // more may be waiting
    if (options.clock->Now() > window_end + options.give_up_after) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", options.job_id, ": the coordinator's trace window was still open ",
                       absl::FormatDuration(options.give_up_after), " after its end"));
    }
    options.clock->SleepFor(options.poll);
  }
  SortTraceProcesses(&collected.processes);
  return collected;
}

absl::StatusOr<std::string> CollectTraceJson(CoordinatorClient& coordinator,
                                             const CollectTraceOptions& options) {
  ASSIGN_OR_RETURN(const CollectedTrace collected, CollectTrace(coordinator, options));
  return trace::WriteChromeTrace(collected.processes);
}

}  // namespace stoker
