#include "coordinator/coordinator_trace.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trace/trace_proto.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

trace::TaskKey KeyOf(const pb::TaskId& task) {
  return trace::TaskKey{task.job_id(), task.epoch(), task.batch_index()};
}

// The coordinator's events go on one track per kind.
uint32_t EventTrack(trace::Stage stage) {
  switch (stage) {
    case trace::Stage::kLeaseGranted:
      return 1;
    case trace::Stage::kHedged:
      return 2;
    default:
      return 3;
  }
}

const absl::flat_hash_map<uint32_t, std::string>& EventTrackNames() {
  static const auto* names = new absl::flat_hash_map<uint32_t, std::string>{
      {1, "leases"}, {2, "hedges"}, {3, "consumed reports"}};
  return *names;
}

// "worker host:port"; empty for a worker not in `workers`.
std::string WorkerName(const std::vector<WorkerRecord>& workers, uint64_t worker_id) {
  for (const WorkerRecord& worker : workers) {
    if (worker.id == worker_id) return "worker " + worker.address;
  }
  return "";
}

// Drops the spans of tasks of other jobs (a rank speaks for its own job only).
void KeepJobSpans(uint64_t job_id, trace::TraceProcess* process) {
  auto& spans = process->spans;
  spans.erase(std::remove_if(spans.begin(), spans.end(),
                             [job_id](const trace::Span& s) { return s.task.job_id != job_id; }),
              spans.end());
}

}  // namespace

CoordinatorTrace::CoordinatorTrace(const Options& options)
    : max_seconds_(options.max_seconds),
      clock_(options.clock),
      store_(trace::TraceStore::Options{.max_spans_per_job =
                                            static_cast<size_t>(options.max_spans_per_job)}) {}

absl::StatusOr<pb::StartTraceResponse> CoordinatorTrace::Start(
    const pb::StartTraceRequest& request) {
  RETURN_IF_ERROR(trace::CheckStartTraceRequest(request, max_seconds_));
  ASSIGN_OR_RETURN(const int64_t until_ns,
                   store_.Start(request.job_id(), Now(), int64_t{request.seconds()} * 1'000'000'000,
                                request.sample_one_in()));
  const int64_t with_grace = until_ns + trace::TraceStore::Options().grace_ns;
  int64_t open = open_until_ns_.load(std::memory_order_relaxed);
  while (open < with_grace &&
         !open_until_ns_.compare_exchange_weak(open, with_grace, std::memory_order_relaxed)) {
  }
  pb::StartTraceResponse response;
  response.set_until_ns(until_ns);
  return response;
}

absl::StatusOr<pb::GetTraceResponse> CoordinatorTrace::Read(
    const pb::GetTraceRequest& request) const {
  RETURN_IF_ERROR(trace::CheckGetTraceRequest(request));
  const size_t max_spans = request.max_spans() == 0 ? trace::kMaxSpansPerPage : request.max_spans();
  ASSIGN_OR_RETURN(trace::TraceStore::Page page,
                   store_.Read(request.job_id(), request.page_token(), max_spans, Now()));
  pb::GetTraceResponse response;
  for (const trace::TraceProcess& process : page.processes) {
    *response.add_processes() = trace::ToProcessSpans(process);
  }
  response.set_next_page_token(page.next_token);
  response.set_tracing(page.tracing);
  response.set_dropped_spans(page.dropped_spans);
  return response;
}

std::optional<pb::TraceControl> CoordinatorTrace::Control(uint64_t job_id) const {
  const std::optional<trace::TraceStore::Window> window = store_.WindowAt(job_id, Now());
  if (!window.has_value()) return std::nullopt;
  pb::TraceControl control;
  control.set_sample_one_in(window->sample_one_in);
  // At least 1 ms: 0 would read as "off" to a peer that rounds.
  control.set_remaining_ms(static_cast<uint32_t>(
      std::clamp<int64_t>(window->remaining_ns / 1'000'000, 1, int64_t{UINT32_MAX})));
  return control;
}

void CoordinatorTrace::AnswerClientHeartbeat(const pb::ClientHeartbeatRequest& request,
                                             const std::vector<WorkerRecord>& workers,
                                             int64_t received_ns,
                                             pb::ClientHeartbeatResponse* response) {
  if (request.trace().processes_size() > 0) {
    AddFromRank(request.job_id(), request.rank(), request.trace(), workers);
  }
  if (std::optional<pb::TraceControl> control = Control(request.job_id())) {
    *response->mutable_trace() = *control;
  }
  if (request.client_clock_ns() != 0) {
    response->set_received_clock_ns(received_ns);
    response->set_sent_clock_ns(Now());
  }
}

void CoordinatorTrace::AnswerWorkerHeartbeat(const pb::WorkerHeartbeatRequest& request,
                                             pb::WorkerHeartbeatResponse* response) const {
  for (uint64_t job_id : request.jobs()) {
    if (std::optional<pb::TraceControl> control = Control(job_id)) {
      (*response->mutable_trace())[job_id] = *control;
    }
  }
}

void CoordinatorTrace::AddFromRank(uint64_t job_id, uint32_t rank, const pb::TraceSpans& spans,
                                   const std::vector<WorkerRecord>& workers) {
  const int64_t now = Now();
  for (const pb::TraceProcessSpans& message : spans.processes()) {
    trace::TraceProcess process = trace::FromProcessSpans(message);
    process.name = message.worker_id() == 0 ? absl::StrCat("rank ", rank)
                                            : WorkerName(workers, message.worker_id());
    if (process.name.empty()) continue;
    KeepJobSpans(job_id, &process);
    store_.Add(job_id, now, process);
  }
}

void CoordinatorTrace::RecordEvent(trace::Stage stage, const pb::TaskId& task) {
  const int64_t now = Now();
  if (now > open_until_ns_.load(std::memory_order_relaxed)) return;
  const std::optional<trace::TraceStore::Window> window = store_.WindowAt(task.job_id(), now);
  const trace::TaskKey key = KeyOf(task);
  if (!window.has_value() ||
      (window->sample_one_in > 1 && trace::TaskHash(key) % window->sample_one_in != 0)) {
    return;
  }
  trace::TraceProcess process;
  process.name = kProcessName;
  process.op_names.emplace_back();
  const uint32_t track = EventTrack(stage);
  process.thread_names[track] = EventTrackNames().at(track);
  process.spans.push_back(
      trace::Span{.stage = stage, .thread_id = track, .task = key, .start_ns = now, .end_ns = now});
  store_.Add(task.job_id(), now, process);
}

}  // namespace stoker
