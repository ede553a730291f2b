// Batch timelines (coordinator.h: StartTrace, GetTrace, and what heartbeats carry while a job
// is traced; coordinator_trace.h keeps the spans).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/coordinator.h"
#include "trace/trace_proto.h"

namespace stoker {

absl::StatusOr<stoker::v1::StartTraceResponse> Coordinator::StartTrace(
    const stoker::v1::StartTraceRequest& request) {
  RETURN_IF_ERROR(trace::CheckStartTraceRequest(request, config_.max_trace_seconds));
  {
    absl::MutexLock lock(&mu_);
    stoker::v1::GetJobRequest job;
    job.set_job_id(request.job_id());
    RETURN_IF_ERROR(GetJobLocked(job).status());  // NOT_FOUND / FAILED_PRECONDITION
  }
  return trace_.Start(request);
}

absl::StatusOr<stoker::v1::GetTraceResponse> Coordinator::GetTrace(
    const stoker::v1::GetTraceRequest& request) {
  RETURN_IF_ERROR(trace::CheckGetTraceRequest(request));
  {
    absl::MutexLock lock(&mu_);
    stoker::v1::GetJobRequest job;
    job.set_job_id(request.job_id());
    RETURN_IF_ERROR(GetJobLocked(job).status());
  }
  return trace_.Read(request);
}

void Coordinator::TraceClientHeartbeat(const stoker::v1::ClientHeartbeatRequest& request,
                                       const std::vector<WorkerRecord>& workers,
                                       int64_t received_ns,
                                       stoker::v1::ClientHeartbeatResponse* response) {
  if (request.trace().processes_size() > 0) {
    trace_.AddFromRank(request.job_id(), request.rank(), request.trace(),
                       [&workers](uint64_t worker_id) -> std::string {
                         for (const WorkerRecord& worker : workers) {
                           if (worker.id == worker_id) return "worker " + worker.address;
                         }
                         return "";
                       });
  }
  if (std::optional<stoker::v1::TraceControl> control = trace_.Control(request.job_id())) {
    *response->mutable_trace() = *control;
  }
  if (request.client_clock_ns() != 0) {
    response->set_received_clock_ns(received_ns);
    response->set_sent_clock_ns(trace_.Now());
  }
}

void Coordinator::TraceWorkerHeartbeat(const stoker::v1::WorkerHeartbeatRequest& request,
                                       stoker::v1::WorkerHeartbeatResponse* response) const {
  for (uint64_t job_id : request.jobs()) {
    if (std::optional<stoker::v1::TraceControl> control = trace_.Control(job_id)) {
      (*response->mutable_trace())[job_id] = *control;
    }
  }
}

}  // namespace stoker
