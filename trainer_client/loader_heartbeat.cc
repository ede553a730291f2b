// LoaderImpl: the heartbeat loop (received reports, the coordinator's worker list, hedging
// reports) and the stream side's callbacks (loader_impl.h: threads and locking).

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "trainer_client/loader_impl.h"

namespace stoker {
namespace {

// Codes after which retrying the heartbeat can't help: the loader fails.
bool IsPermanent(absl::StatusCode code) {
  using Code = absl::StatusCode;
  for (Code permanent : {Code::kNotFound, Code::kInvalidArgument, Code::kFailedPrecondition,
                         Code::kPermissionDenied, Code::kUnauthenticated, Code::kUnimplemented,
                         Code::kAlreadyExists, Code::kOutOfRange, Code::kDataLoss}) {
    if (code == permanent) return true;
  }
  return false;
}

}  // namespace

void LoaderImpl::HeartbeatLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (env_.clock->AwaitWithTimeout(&mu_, absl::Condition(&stopping_),
                                       options_.heartbeat_interval)) {
        return;
      }
    }
    ReapEndedStreams();
    const absl::Status status = HeartbeatOnce();
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      heartbeat_failures_ = 0;
    } else if (IsPermanent(status.code())) {
      FailLocked(status);
    } else {
      ++heartbeat_failures_;
      if (heartbeat_failures_ == 1 || heartbeat_failures_ % 50 == 0) {
        STOKER_LOG(WARNING) << "client heartbeat failed (" << heartbeat_failures_
                            << " in a row), retrying: " << status;
      }
    }
    GrantCreditsLocked();  // time-based stall escalation
  }
}

absl::Status LoaderImpl::HeartbeatOnce() {
  v1::ClientHeartbeatRequest request;
  request.set_job_id(job_.job_id());
  request.set_rank(options_.rank);
  request.set_client_id(options_.client_id);
  const int64_t clock = trace_.ClockIfOn();
  request.set_client_clock_ns(clock);
  trace_.FillHeartbeat(&request);  // lost if the call fails: a trace is best effort
  std::vector<v1::TaskId> reported;
  // Outside mu_: a sample (an NVML call) may take a while.
  const std::optional<double> gpu_utilization =
      env_.gpu_utilization != nullptr ? env_.gpu_utilization->Sample() : std::nullopt;
  {
    absl::MutexLock lock(&mu_);
    reported = consumer_.TakeReceivedReport();
    *request.mutable_stats() = consumer_.Snapshot(env_.clock->Now(), gpu_utilization);
    AddOverdueLocked(&request);
  }
  // ClientHeartbeatRequest.consumed is the received report (the proto's historical name).
  *request.mutable_received() = {reported.begin(), reported.end()};
  absl::StatusOr<v1::ClientHeartbeatResponse> response = env_.coordinator->ClientHeartbeat(request);
  if (!response.ok()) {
    trace_.OnHeartbeatFailed();
    absl::MutexLock lock(&mu_);
    consumer_.RestoreReceivedReport(std::move(reported));  // reported again next time
    return response.status();
  }
  trace_.OnHeartbeatResponse(clock, *response);
  Reconcile(*response);
  return absl::OkStatus();
}

void LoaderImpl::AddOverdueLocked(v1::ClientHeartbeatRequest* request) {
  if (!streams_.Overdue(env_.clock->Now())) return;
  for (v1::TaskId& task : consumer_.ReportOverdue(kMaxOverdueTasks)) {
    *request->add_overdue() = std::move(task);
  }
}

void LoaderImpl::Reconcile(const v1::ClientHeartbeatResponse& response) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  if (response.data_error() != data_error_) {
    data_error_ = response.data_error();
    if (data_error_.empty()) {
      STOKER_LOG(INFO) << "the coordinator reaches the job's dataset again";
    } else {
      STOKER_LOG(WARNING) << "coordinator: " << data_error_;
    }
  }
  const EpochBuffer& buffer = consumer_.buffer();
  if (response.state() == v1::JOB_STATE_FINISHED && !consumer_.all_received()) {
    FailLocked(absl::FailedPreconditionError(absl::StrCat(
        "job '", options_.job_name, "' (id ", job_.job_id(),
        ") is finished on the coordinator, but this client received only ", buffer.accepted_total(),
        " of the ", buffer.expected_total(), " batches of rank ", options_.rank,
        " (another client of this rank received them?); use a new job name")));
    return;
  }
  streams_.Reconcile(response.workers(), /*open_new=*/!consumer_.all_received());
  GrantCreditsLocked();
}

void LoaderImpl::OnBatch(StreamDelivery delivery) {
  absl::MutexLock lock(&mu_);
  if (!delivery.decoded.ok()) {
    streams_.Fail(delivery.stream, delivery.decoded.status());
    return;
  }
  // Ending: handed back unacknowledged, fetched again.
  if (!streams_.OnBatch(delivery.stream, *delivery.decoded)) return;
  const Batch batch(delivery.decoded->batch);
  const uint64_t wire_bytes = delivery.decoded->wire_bytes;
  const ConsumerSide::Added added =
      consumer_.Add(delivery.stream, batch, wire_bytes, delivery.received_at, env_.clock->Now());
  switch (added.result) {
    case EpochBuffer::AddResult::kAccepted:
      if (delivery.sampled) trace_.OnAccepted(batch.header().task(), trace_.Now());
      if (!added.bad_samples.ok()) FailLocked(added.bad_samples);
      streams_.OnAccepted(delivery.stream, batch, wire_bytes);
      break;
    case EpochBuffer::AddResult::kDuplicate:
      streams_.OnDuplicate(delivery.stream, batch.header().task());
      break;
    case EpochBuffer::AddResult::kInvalid:
      break;
  }
  GrantCreditsLocked();
}

void LoaderImpl::OnStreamDone(StreamId id, const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  streams_.OnDone(id, status, stopping_, consumer_.all_received());
}

void LoaderImpl::ReapEndedStreams() {
  StreamSide::Ended ended;
  {
    absl::MutexLock lock(&mu_);
    ended = streams_.TakeEnded();
  }
  ended.CancelAndJoin();  // outside mu_: Cancel may run on_done inline
}

}  // namespace stoker
