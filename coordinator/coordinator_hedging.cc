// Hedging (coordinator.h, step 5): the overdue reports of a ClientHeartbeat and the backup
// leases they queue.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/coordinator.h"

namespace stoker {

using stoker::v1::TaskId;
using trace::Stage;

bool Coordinator::HedgeIsStaleLocked(const TaskId& task) const {
  return state_.IsTaskDone(task) || state_.FindJob(task.job_id()) == nullptr;
}

absl::Status Coordinator::CheckOverdueLocked(const stoker::v1::ClientHeartbeatRequest& request,
                                             const JobRecord& job) const {
  for (int i = 0; i < std::min(request.overdue_size(), kMaxOverdue); ++i) {
    RETURN_IF_ERROR(CheckTaskOfRankLocked(request.overdue(i), job, request.rank(),
                                          absl::StrCat("overdue[", i, "]: ")));
  }
  return absl::OkStatus();
}

void Coordinator::HedgeOverdueLocked(const stoker::v1::ClientHeartbeatRequest& request,
                                     const JobRecord& job) {
  hedges_.Prune([this](const TaskId& task) { return HedgeIsStaleLocked(task); });
  for (int i = 0; i < std::min(request.overdue_size(), kMaxOverdue); ++i) {
    const TaskId& task = request.overdue(i);
    const std::optional<uint64_t> holder = state_.LeaseHolder(task);
    if (holder.has_value() && hedges_.Add(task, request.rank(), *holder)) {
      trace_.RecordEvent(Stage::kHedged, task);
      STOKER_LOG(INFO) << "client of job " << job.id << " rank " << request.rank() << " reports "
                       << DescribeTask(task) << " overdue; queued a backup lease (primary: worker "
                       << *holder << ")";
    }
  }
}

}  // namespace stoker
