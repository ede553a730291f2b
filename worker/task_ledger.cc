#include "worker/task_ledger.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

// Smallest reports budget a heartbeat shrinks to (a few tasks).
constexpr size_t kMinReportBytes = 256;

// Encoded size of `task` as an element of a repeated field (tag, length, message).
size_t ReportBytes(const pb::TaskId& task) { return task.ByteSizeLong() + 2; }

}  // namespace

TaskLedger::TaskLedger(std::function<void()> on_hand_back)
    : on_hand_back_(std::move(on_hand_back)) {}

TaskLedger::TaskKey TaskLedger::KeyOf(const pb::TaskId& task) {
  return {task.job_id(), task.epoch(), task.batch_index()};
}

void TaskLedger::Hold(const StreamSession& session,
                      const google::protobuf::RepeatedPtrField<pb::Lease>& leases) {
  {
    absl::MutexLock lock(&mu_);
    // Checked under the lock: HandBack takes it after the session was detached.
    if (!session.detached()) {
      for (const pb::Lease& lease : leases) held_[KeyOf(lease.task())] = &session;
      return;
    }
    for (const pb::Lease& lease : leases) returned_.push_back(lease.task());
  }
  if (!leases.empty()) on_hand_back_();
}

void TaskLedger::Delivered(const google::protobuf::RepeatedPtrField<pb::TaskId>& tasks) {
  absl::MutexLock lock(&mu_);
  for (const pb::TaskId& task : tasks) held_.erase(KeyOf(task));
  KeepReportsLocked(&delivered_, tasks);
}

size_t TaskLedger::HandBack(const StreamSession* session) {
  size_t handed_back = 0;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->second != session) {
        ++it;
        continue;
      }
      pb::TaskId& task = returned_.emplace_back();
      task.set_job_id(std::get<0>(it->first));
      task.set_epoch(std::get<1>(it->first));
      task.set_batch_index(std::get<2>(it->first));
      it = held_.erase(it);
      ++handed_back;
    }
  }
  if (handed_back > 0) on_hand_back_();
  return handed_back;
}

void TaskLedger::KeepReportsLocked(std::vector<pb::TaskId>* list,
                                   const google::protobuf::RepeatedPtrField<pb::TaskId>& tasks) {
  list->insert(list->end(), tasks.begin(), tasks.end());
  if (list->size() <= kMaxPendingReports) return;
  const size_t dropped = list->size() - kMaxPendingReports;
  list->erase(list->begin(), list->begin() + static_cast<ptrdiff_t>(dropped));
  STOKER_LOG(WARNING) << "dropped the " << dropped << " oldest of " << kMaxPendingReports
                      << " unsent task reports; their leases expire at the coordinator";
}

void TaskLedger::TakeReports(pb::WorkerHeartbeatRequest* request) {
  absl::MutexLock lock(&mu_);
  // What the rest of the request (stats, the jobs held) leaves of half the smallest limit.
  const size_t rest = request->ByteSizeLong();
  size_t budget =
      std::min(report_budget_, rest < kHeartbeatBytes ? kHeartbeatBytes - rest : kMinReportBytes);
  bool left_behind = false;
  for (auto [list, field] : {std::pair{&returned_, request->mutable_returned()},
                             std::pair{&delivered_, request->mutable_delivered()}}) {
    while (!list->empty() && ReportBytes(list->back()) <= budget) {
      budget -= ReportBytes(list->back());
      *field->Add() = std::move(list->back());
      list->pop_back();
    }
    left_behind = left_behind || !list->empty();
  }
  backlog_ = left_behind;
}

void TaskLedger::OnHeartbeatAnswered(const pb::WorkerHeartbeatResponse& response) {
  absl::MutexLock lock(&mu_);
  report_budget_ = std::min(kHeartbeatBytes, report_budget_ * 2);
  for (const pb::TaskId& task : response.drop_leases()) held_.erase(KeyOf(task));
  if (response.drop_leases_size() > 0) {
    STOKER_LOG(INFO) << "coordinator revoked " << response.drop_leases_size()
                     << " expired leases of this worker";
  }
  // A retired job's leases went with it: nothing to hand back or report.
  for (uint64_t job_id : response.retired_jobs()) {
    held_.erase(held_.lower_bound({job_id, 0, 0}), held_.lower_bound({job_id + 1, 0, 0}));
  }
}

void TaskLedger::OnHeartbeatFailed(const pb::WorkerHeartbeatRequest& request,
                                   const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  KeepReportsLocked(&delivered_, request.delivered());
  KeepReportsLocked(&returned_, request.returned());
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    report_budget_ = std::max(kMinReportBytes, report_budget_ / 2);
  }
}

bool TaskLedger::backlog() const {
  absl::MutexLock lock(&mu_);
  return backlog_;
}

bool TaskLedger::reports_due() const {
  absl::MutexLock lock(&mu_);
  return backlog_ || !returned_.empty();
}

size_t TaskLedger::held() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

size_t TaskLedger::to_hand_back() const {
  absl::MutexLock lock(&mu_);
  return returned_.size();
}

bool TaskLedger::AwaitNoneHeld(Clock* clock, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return held_.empty(); };
  return clock->AwaitWithDeadline(&mu_, absl::Condition(&none), deadline);
}

}  // namespace stoker
