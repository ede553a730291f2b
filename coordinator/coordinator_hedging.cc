// Hedging (coordinator.h, step 5): the overdue reports of a ClientHeartbeat, the backup leases
// they queue in the HedgeBook (hedge_book.h), and LeaseTasks handing them out.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/coordinator.h"

namespace stoker {

using stoker::v1::TaskId;
using trace::Stage;

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
  hedges_.PruneStale(state_);
  for (int i = 0; i < std::min(request.overdue_size(), kMaxOverdue); ++i) {
    const TaskId& task = request.overdue(i);
    if (const std::optional<uint64_t> holder =
            hedges_.HedgeIfLeased(state_, task, request.rank())) {
      trace_.RecordEvent(Stage::kHedged, task);
      STOKER_LOG(INFO) << "client of job " << job.id << " rank " << request.rank() << " reports "
                       << DescribeTask(task) << " overdue; queued a backup lease (primary: worker "
                       << *holder << ")";
    }
  }
}

size_t Coordinator::LeaseBackupsLocked(const stoker::v1::LeaseTasksRequest& request, size_t max,
                                       stoker::v1::LeaseTasksResponse* response) {
  const std::vector<TaskId> backups =
      hedges_.TakeBackups(state_, request.job_id(), request.rank(), request.worker_id(), max);
  if (backups.empty()) return 0;
  const int64_t expires = absl::ToUnixMillis(clock_->Now() + config_.lease_duration);
  for (const TaskId& task : backups) {
    trace_.RecordEvent(Stage::kLeaseGranted, task);
    stoker::v1::Lease* out = response->add_leases();
    *out->mutable_task() = task;
    out->set_expires_unix_ms(expires);
  }
  STOKER_LOG(INFO) << "backup lease of " << backups.size() << " overdue task(s) of job "
                   << request.job_id() << " rank " << request.rank() << " to worker "
                   << request.worker_id();
  return backups.size();
}

}  // namespace stoker
