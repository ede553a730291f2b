#include "trace/span_recorder.h"

#include <algorithm>

#include "common/counter_rng.h"

namespace stoker::trace {

int64_t NowNanos(Clock* clock) { return absl::ToUnixNanos(clock->Now()); }

int64_t MonotonicNowNanos() { return NowNanos(Clock::Real()); }

uint64_t TaskHash(const TaskKey& task) {
  return Mix64(task.job_id ^ (uint64_t{task.epoch} * kGoldenGamma) ^
               (task.batch_index * 0xbf58476d1ce4e5b9ULL));
}

SpanRecorder::SpanRecorder(Options options) : clock_(options.clock) {
  ring_.resize(std::max<size_t>(options.capacity, 1));
  names_.emplace_back();
}

void SpanRecorder::Record(const Span& span) {
  absl::MutexLock lock(&mu_);
  if (size_ == ring_.size()) {
    ring_[oldest_] = span;
    oldest_ = (oldest_ + 1) % ring_.size();
    ++dropped_;
    return;
  }
  ring_[(oldest_ + size_) % ring_.size()] = span;
  ++size_;
}

std::vector<Span> SpanRecorder::Drain(size_t max) {
  absl::MutexLock lock(&mu_);
  const size_t n = std::min(max, size_);
  std::vector<Span> spans;
  spans.reserve(n);
  for (size_t i = 0; i < n; ++i) spans.push_back(ring_[(oldest_ + i) % ring_.size()]);
  oldest_ = (oldest_ + n) % ring_.size();
  size_ -= n;
  return spans;
}

size_t SpanRecorder::size() const {
  absl::MutexLock lock(&mu_);
  return size_;
}

uint64_t SpanRecorder::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

uint16_t SpanRecorder::InternName(absl::string_view name) {
  if (name.empty()) return 0;
  absl::MutexLock lock(&mu_);
  const auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  if (names_.size() >= kMaxNames) return 0;
  const auto id = static_cast<uint16_t>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(std::string(name), id);
  return id;
}

std::vector<std::string> SpanRecorder::Names() const {
  absl::MutexLock lock(&mu_);
  return names_;
}

uint32_t SpanRecorder::CurrentThreadId() {
  static std::atomic<uint32_t> next_id{1};
  thread_local const uint32_t id = next_id.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void SpanRecorder::NameCurrentThread(absl::string_view name) {
  const uint32_t id = CurrentThreadId();
  absl::MutexLock lock(&mu_);
  if (thread_names_.size() >= kMaxNames && !thread_names_.contains(id)) return;
  thread_names_[id] = std::string(name);
}

absl::flat_hash_map<uint32_t, std::string> SpanRecorder::ThreadNames() const {
  absl::MutexLock lock(&mu_);
  return thread_names_;
}

ScopedSpan::ScopedSpan(SpanRecorder* recorder, Stage stage, const TaskKey& task, uint16_t name_id)
    : recorder_(recorder != nullptr && recorder->Sampled(task) ? recorder : nullptr) {
  if (recorder_ == nullptr) return;
  span_.stage = stage;
  span_.name_id = name_id;
  span_.thread_id = SpanRecorder::CurrentThreadId();
  span_.task = task;
  span_.start_ns = recorder_->Now();
}

ScopedSpan::~ScopedSpan() {
  if (recorder_ == nullptr) return;
  span_.end_ns = recorder_->Now();
  recorder_->Record(span_);
}

}  // namespace stoker::trace
