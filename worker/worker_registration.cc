#include "worker/worker_registration.h"

#include <algorithm>
#include <utility>

#include "common/ids.h"
#include "common/logging.h"

namespace stoker {

namespace pb = ::stoker::v1;

WorkerRegistration::WorkerRegistration(const WorkerConfig& config, CoordinatorClient* coordinator,
                                       std::function<void(uint64_t worker_id)> on_registered)
    : coordinator_(coordinator), on_registered_(std::move(on_registered)) {
  absl::MutexLock lock(&mu_);
  request_.set_cores(config.ResolvedThreads());
  request_.set_hybrid_client_id(config.hybrid_client_id);
  request_.set_pool(config.pool);
}

void WorkerRegistration::SetObserver(std::function<void(bool registered)> observer) {
  observer_ = std::move(observer);
}

void WorkerRegistration::set_advertise_address(const std::string& address) {
  absl::MutexLock lock(&mu_);
  request_.set_address(address);
}

absl::Status WorkerRegistration::Register() {
  pb::RegisterWorkerRequest request;
  {
    absl::MutexLock lock(&mu_);
    request = request_;
  }
  absl::StatusOr<pb::RegisterWorkerResponse> response = coordinator_->RegisterWorker(request);
  if (!response.ok()) return response.status();
  {
    absl::MutexLock lock(&mu_);
    worker_id_ = response->worker_id();
    heartbeat_interval_ =
        absl::Milliseconds(std::max<uint32_t>(1, response->heartbeat_interval_ms()));
  }
  if (on_registered_) on_registered_(response->worker_id());
  STOKER_LOG(INFO) << "registered as worker " << ShortId(response->worker_id()) << " at "
                   << request.address();
  SetRegistered(true);
  return absl::OkStatus();
}

void WorkerRegistration::SetRegistered(bool registered) {
  {
    absl::MutexLock lock(&mu_);
    if (registered_ == registered) return;
    registered_ = registered;
    exhausted_in_a_row_ = 0;
  }
  if (observer_) observer_(registered);
}

void WorkerRegistration::OnHeartbeatAnswered() {
  absl::MutexLock lock(&mu_);
  exhausted_in_a_row_ = 0;
}

void WorkerRegistration::OnHeartbeatFailed(const absl::Status& status) {
  bool lost = status.code() == absl::StatusCode::kNotFound ||
              status.code() == absl::StatusCode::kFailedPrecondition;
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    absl::MutexLock lock(&mu_);
    lost = ++exhausted_in_a_row_ >= kExhaustedBeforeRegister;
  }
  if (!lost) {
    STOKER_LOG(WARNING) << "heartbeat failed: " << status;
    return;
  }
  STOKER_LOG(WARNING) << "coordinator refused this worker's heartbeats (" << status
                      << "); registering again";
  SetRegistered(false);
  if (absl::Status registered = Register(); !registered.ok()) {
    STOKER_LOG(WARNING) << "registering again failed: " << registered;
  }
}

bool WorkerRegistration::registered() const {
  absl::MutexLock lock(&mu_);
  return registered_;
}

uint64_t WorkerRegistration::worker_id() const {
  absl::MutexLock lock(&mu_);
  return worker_id_;
}

absl::Duration WorkerRegistration::heartbeat_interval() const {
  absl::MutexLock lock(&mu_);
  return heartbeat_interval_;
}

}  // namespace stoker
