#include "trace/trace_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace stoker::trace {

absl::StatusOr<int64_t> TraceStore::Start(uint64_t job_id, int64_t now_ns, int64_t duration_ns,
                                          uint32_t sample_one_in) {
  absl::MutexLock lock(&mu_);
  if (!jobs_.contains(job_id) && jobs_.size() >= options_.max_jobs) {
    return absl::ResourceExhaustedError(
        absl::StrCat("traces: ", jobs_.size(), " jobs are traced or hold spans, the limit is ",
                     options_.max_jobs, "; wait for them to retire"));
  }
  JobTrace& job = jobs_[job_id];
  job.until_ns = now_ns + duration_ns;
  job.sample_one_in = std::max<uint32_t>(sample_one_in, 1);
  return job.until_ns;
}

std::optional<TraceStore::Window> TraceStore::WindowAt(uint64_t job_id, int64_t now_ns) const {
  absl::MutexLock lock(&mu_);
  const auto it = jobs_.find(job_id);
  if (it == jobs_.end() || now_ns >= it->second.until_ns) return std::nullopt;
  return Window{it->second.sample_one_in, it->second.until_ns - now_ns};
}

void TraceStore::Add(uint64_t job_id, int64_t now_ns, const TraceProcess& process) {
  absl::MutexLock lock(&mu_);
  const auto it = jobs_.find(job_id);
  if (it == jobs_.end() || now_ns >= it->second.until_ns + options_.grace_ns) return;
  JobTrace& job = it->second;
  auto index = job.process_index.find(process.name);
  if (index == job.process_index.end()) {
    if (job.processes.size() >= options_.max_processes_per_job) {
      job.dropped_spans += process.spans.size();
      return;
    }
    index = job.process_index.emplace(process.name, job.processes.size()).first;
    job.processes.emplace_back().name = process.name;
  }
  const std::vector<uint16_t> renumbered = MergeNames(process, &job.processes[index->second]);
  for (Span span : process.spans) {
    if (job.spans.size() >= options_.max_spans_per_job) {
      ++job.dropped_spans;
      continue;
    }
    span.name_id = span.name_id < renumbered.size() ? renumbered[span.name_id] : 0;
    job.spans.emplace_back(index->second, span);
  }
}

absl::StatusOr<TraceStore::Page> TraceStore::Read(uint64_t job_id, uint64_t token, size_t max_spans,
                                                  int64_t now_ns) const {
  absl::MutexLock lock(&mu_);
  const auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("job_id: job ", job_id, " has no trace"));
  }
  const JobTrace& job = it->second;
  // Tokens are offsets + 1, so that 0 can mean "the first page" in and "no more" out.
  const uint64_t offset = token == 0 ? 0 : token - 1;
  if (offset > job.spans.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_token: ", token, " is past the ", job.spans.size(), " spans kept"));
  }
  Page page;
  page.tracing = now_ns < job.until_ns + options_.grace_ns;
  page.dropped_spans = job.dropped_spans;
  const size_t end = std::min<size_t>(job.spans.size(), offset + std::max<size_t>(max_spans, 1));
  page.next_token = end < job.spans.size() || page.tracing ? end + 1 : 0;
  // The page's processes in the job's order (first arrival), each with its names.
  std::vector<size_t> used;
  for (size_t i = offset; i < end; ++i) used.push_back(job.spans[i].first);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (size_t process : used) page.processes.push_back(job.processes[process]);
  for (size_t i = offset; i < end; ++i) {
    const auto& [process, span] = job.spans[i];
    const size_t at = std::lower_bound(used.begin(), used.end(), process) - used.begin();
    page.processes[at].spans.push_back(span);
  }
  return page;
}

void TraceStore::Forget(uint64_t job_id) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(job_id);
}

}  // namespace stoker::trace
