#include "trace/client_trace.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "trace/trace_proto.h"

namespace stoker {
namespace {

// The track of the consumer's stages ("consumer <thread id>").
constexpr char kConsumerThread[] = "consumer";

// `spans` of `process` as one heartbeat entry, moved by `shift_ns` into the coordinator's clock,
// within the per-message limits of names (trace_proto.h): op names past the limit read as their
// stage, thread names past it as "thread <id>".
// `bound_ns`: the entry's clock error bound.
v1::TraceProcessSpans ToHeartbeatEntry(uint64_t worker_id, const trace::TraceProcess& process,
                                       absl::Span<const trace::Span> spans, int64_t shift_ns,
                                       int64_t bound_ns) {
  v1::TraceProcessSpans entry;
  entry.set_worker_id(worker_id);
  const size_t op_names = std::min<size_t>(process.op_names.size(), trace::kMaxNamesPerMessage + 1);
  for (size_t i = 1; i < op_names; ++i) entry.add_op_names(process.op_names[i]);
  auto& threads = *entry.mutable_thread_names();
  for (const trace::Span& span : spans) {
    v1::TraceSpan* wire = entry.add_spans();
    wire->set_stage(static_cast<uint32_t>(span.stage));
    wire->set_name_id(span.name_id < op_names ? span.name_id : 0);
    wire->set_thread_id(span.thread_id);
    wire->mutable_task()->set_job_id(span.task.job_id);
    wire->mutable_task()->set_epoch(span.task.epoch);
    wire->mutable_task()->set_batch_index(span.task.batch_index);
    wire->set_start_ns(span.start_ns + shift_ns);
    wire->set_end_ns(span.end_ns + shift_ns);
    const auto name = process.thread_names.find(span.thread_id);
    if (name != process.thread_names.end() && !threads.contains(span.thread_id) &&
        static_cast<int>(threads.size()) < trace::kMaxNamesPerMessage) {
      threads[span.thread_id] = name->second.substr(0, trace::kMaxNameBytes);
    }
  }
  entry.set_clock_error_bound_ns(bound_ns);
  return entry;
}

}  // namespace

ClientTrace::ClientTrace(Clock* clock) : recorder_(trace::SpanRecorder::Options{.clock = clock}) {}

void ClientTrace::OnHeartbeatResponse(int64_t request_clock_ns,
                                      const v1::ClientHeartbeatResponse& response) {
  const int64_t received = request_clock_ns == 0 ? 0 : Now();
  const bool was_on = on();
  recorder_.SetSampling(
      response.has_trace() ? std::max<uint32_t>(response.trace().sample_one_in(), 1) : 0);
  absl::MutexLock lock(&mu_);
  if (!was_on && on()) {  // a new window: estimate afresh
    pinned_coordinator_.reset();
    coordinator_samples_ = 0;
    pinned_workers_.clear();
  }
  if (received == 0 || response.received_clock_ns() == 0) return;
  // A broken sample is refused, the window kept.
  if (coordinator_offset_
          .Add(trace::ClockSample{request_clock_ns, response.received_clock_ns(),
                                  response.sent_clock_ns(), received})
          .ok()) {
    ++coordinator_samples_;
  }
}

void ClientTrace::OnWorkerSpans(const v1::BatchHeader& header, int64_t arrived_ns) {
  const v1::BatchTrace& batch_trace = header.trace();
  if (!trace::CheckBatchTrace(batch_trace, "header.trace").ok()) return;
  absl::MutexLock lock(&mu_);
  std::optional<trace::ClockOffset> offset;
  if (const auto pinned = pinned_workers_.find(header.worker_id());
      pinned != pinned_workers_.end()) {
    offset = pinned->second;
  } else {
    trace::ClockOffsetEstimator& hop = worker_offsets_[header.worker_id()];
    if (batch_trace.credit_client_ns() != 0) {
      (void)hop.Add(trace::ClockSample{batch_trace.credit_client_ns(),
                                       batch_trace.credit_received_ns(), batch_trace.send_ns(),
                                       arrived_ns});
    }
    offset = hop.Estimate();
    if (offset.has_value()) pinned_workers_[header.worker_id()] = *offset;
  }
  const size_t spans = static_cast<size_t>(batch_trace.spans_size()) + 1;
  if (!offset.has_value() || pending_worker_spans_ + spans > kMaxPendingWorkerSpans) {
    dropped_ += spans;
    return;
  }
  const trace::TaskKey task = KeyOf(header.task());
  trace::TraceProcess process = trace::FromBatchTrace(batch_trace, task, -offset->offset_ns);
  for (const v1::TraceSpan& queued : batch_trace.spans()) {
    if (queued.stage() != static_cast<uint32_t>(trace::Stage::kQueue)) continue;
    const int64_t sent = trace::PeerToLocal(batch_trace.send_ns(), *offset);
    process.spans.push_back(trace::Span{.stage = trace::Stage::kSend,
                                        .thread_id = queued.thread_id(),
                                        .task = task,
                                        .start_ns = sent,
                                        .end_ns = std::max(sent, arrived_ns)});
  }
  process.clock_error_bound_ns = offset->error_bound_ns;
  pending_worker_spans_ += process.spans.size();
  trace::MergeProcess(process, &workers_[header.worker_id()]);
}

void ClientTrace::Record(trace::Stage stage, const v1::TaskId& task, int64_t start_ns,
                         int64_t end_ns, const char* thread_name) {
  const uint32_t thread = trace::SpanRecorder::CurrentThreadId();
  recorder_.NameCurrentThread(absl::StrCat(thread_name, " ", thread));
  recorder_.Record(trace::Span{.stage = stage,
                               .thread_id = thread,
                               .task = KeyOf(task),
                               .start_ns = start_ns,
                               .end_ns = std::max(start_ns, end_ns)});
}

void ClientTrace::OnAccepted(const v1::TaskId& task, int64_t ns) {
  absl::MutexLock lock(&mu_);
  if (accepted_.size() < kMaxAcceptedTasks) accepted_[{task.epoch(), task.batch_index()}] = ns;
}

std::optional<int64_t> ClientTrace::TakeAccepted(const v1::TaskId& task) {
  absl::MutexLock lock(&mu_);
  const auto it = accepted_.find({task.epoch(), task.batch_index()});
  if (it == accepted_.end()) return std::nullopt;
  const int64_t ns = it->second;
  accepted_.erase(it);
  return ns;
}

void ClientTrace::OnPopped(const v1::TaskId& task) {
  if (!Sampled(task)) return;
  const int64_t popped = Now();
  if (std::optional<int64_t> accepted = TakeAccepted(task)) {
    Record(trace::Stage::kBufferWait, task, *accepted, popped, kConsumerThread);
  }
  absl::MutexLock lock(&mu_);
  popped_.emplace(task, popped);
}

void ClientTrace::OnHandedOut(const v1::TaskId& task) {
  absl::MutexLock lock(&mu_);
  if (!popped_.has_value() || KeyOf(popped_->first) != KeyOf(task)) return;
  const int64_t now = Now();
  Record(trace::Stage::kHandoff, task, popped_->second, now, kConsumerThread);
  handed_out_.emplace(task, now);
  step_open_.store(true, std::memory_order_relaxed);
  popped_.reset();
}

void ClientTrace::OnDeviceCopy(const v1::TaskId& task, int64_t start_ns, int64_t end_ns) {
  Record(trace::Stage::kH2D, task, start_ns, end_ns, kConsumerThread);
  absl::MutexLock lock(&mu_);
  if (handed_out_.has_value() && KeyOf(handed_out_->first) == KeyOf(task)) {
    handed_out_->second = std::max(handed_out_->second, end_ns);
  }
}

void ClientTrace::OnNextCalled() {
  if (!step_open_.load(std::memory_order_relaxed)) return;
  absl::MutexLock lock(&mu_);
  if (!handed_out_.has_value()) return;
  const auto& [task, returned_ns] = *handed_out_;
  Record(trace::Stage::kConsumerStep, task, returned_ns, Now(), kConsumerThread);
  handed_out_.reset();
  step_open_.store(false, std::memory_order_relaxed);
}

void ClientTrace::FillHeartbeat(v1::ClientHeartbeatRequest* request) {
  absl::MutexLock lock(&mu_);
  if (!pinned_coordinator_.has_value() && coordinator_samples_ >= kSamplesBeforePin) {
    pinned_coordinator_ = coordinator_offset_.Estimate();
  }
  const std::optional<trace::ClockOffset>& hop2 = pinned_coordinator_;
  if (!hop2.has_value() || (recorder_.size() == 0 && pending_worker_spans_ == 0)) return;
  size_t budget = trace::kMaxSpansPerHeartbeat;
  v1::TraceSpans* out = request->mutable_trace();
  trace::TraceProcess own;
  own.op_names = recorder_.Names();
  own.thread_names = recorder_.ThreadNames();
  own.spans = recorder_.Drain(budget);
  budget -= own.spans.size();
  if (!own.spans.empty()) {
    *out->add_processes() =
        ToHeartbeatEntry(0, own, own.spans, hop2->offset_ns, hop2->error_bound_ns);
  }
  for (auto it = workers_.begin(); it != workers_.end() && budget > 0;) {
    if (out->processes_size() >= trace::kMaxProcessesPerHeartbeat) break;
    trace::TraceProcess& process = it->second;
    const size_t taken = std::min(budget, process.spans.size());
    *out->add_processes() =
        ToHeartbeatEntry(it->first, process, absl::MakeConstSpan(process.spans).subspan(0, taken),
                         hop2->offset_ns, process.clock_error_bound_ns + hop2->error_bound_ns);
    process.spans.erase(process.spans.begin(), process.spans.begin() + taken);
    pending_worker_spans_ -= taken;
    budget -= taken;
    if (process.spans.empty()) {
      workers_.erase(it++);
    } else {
      ++it;
    }
  }
}

uint64_t ClientTrace::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_ + recorder_.dropped();
}

}  // namespace stoker
