#ifndef STOKER_WORKER_FAKE_COORDINATOR_FOR_TEST_H_
#define STOKER_WORKER_FAKE_COORDINATOR_FOR_TEST_H_

// A coordinator and a stream sink for the tests of the worker's logic: a job kJob of 16 batches
// of 4 tiny images (kBatchBytes each), world size 1.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.pb.h"
#include "worker/stream_session.h"

namespace stoker {
namespace worker_testing {

namespace pb = ::stoker::v1;

constexpr uint64_t kJob = 5;
constexpr uint64_t kBatchesPerEpoch = 16;  // 64 samples in batches of 4
constexpr uint64_t kBatchBytes = 4 * 4 * 3 * sizeof(float) * 4;

// Registers the worker (ids 7, 8, ...), answers heartbeats (retiring the jobs in `retire`, or
// failing as told), leases the tasks of kJob in order, and answers GetJob for kJob (NOT_FOUND for
// any other). Thread-safe.
class FakeCoordinator : public CoordinatorClient {
 public:
  absl::StatusOr<pb::RegisterWorkerResponse> RegisterWorker(
      const pb::RegisterWorkerRequest& request) override {
    absl::MutexLock lock(&mu_);
    last_registration_ = request;
    if (!register_error_.ok()) return register_error_;
    pb::RegisterWorkerResponse response;
    response.set_worker_id(7 + registrations_++);
    response.set_heartbeat_interval_ms(1000);
    return response;
  }
  absl::StatusOr<pb::WorkerHeartbeatResponse> WorkerHeartbeat(
      const pb::WorkerHeartbeatRequest& request) override {
    absl::MutexLock lock(&mu_);
    heartbeats_.push_back(request);
    if (!heartbeat_error_.ok()) return heartbeat_error_;
    pb::WorkerHeartbeatResponse response;
    for (uint64_t job : request.jobs()) {
      if (job == retire_) response.add_retired_jobs(job);
      if (job == traced_) (*response.mutable_trace())[job].set_sample_one_in(trace_one_in_);
    }
    return response;
  }
  absl::StatusOr<pb::GetJobResponse> GetJob(const pb::GetJobRequest& request) override {
    absl::MutexLock lock(&mu_);
    ++get_jobs_;
    if (request.job_id() != kJob) return absl::NotFoundError("job not found");
    pb::GetJobResponse response;
    pb::JobSpec* spec = response.mutable_spec();
    pb::SyntheticSource* source = spec->mutable_dataset()->mutable_synthetic();
    source->set_num_samples(64);
    source->set_height(4);
    source->set_width(4);
    source->set_channels(3);
    source->set_num_classes(2);
    spec->mutable_pipeline()->add_ops()->mutable_to_float();
    spec->set_batch_size(4);
    spec->set_world_size(1);
    spec->set_epochs(1);
    spec->set_shuffle(pb::SHUFFLE_MODE_NONE);
    return response;
  }

  absl::StatusOr<pb::LeaseTasksResponse> LeaseTasks(const pb::LeaseTasksRequest& request) override {
    absl::MutexLock lock(&mu_);
    pb::LeaseTasksResponse response;
    for (uint32_t i = 0; i < request.max_tasks() && leased_ < kBatchesPerEpoch; ++i) {
      pb::TaskId* task = response.add_leases()->mutable_task();
      task->set_job_id(kJob);
      task->set_batch_index(leased_++);
    }
    return response;
  }

  void Retire(uint64_t job) {
    absl::MutexLock lock(&mu_);
    retire_ = job;
  }
  // Heartbeat responses say `job` is traced, 1 task in `one_in` (job 0: none is).
  void Trace(uint64_t job, uint32_t one_in) {
    absl::MutexLock lock(&mu_);
    traced_ = job;
    trace_one_in_ = one_in;
  }
  void FailHeartbeats(absl::Status error) {
    absl::MutexLock lock(&mu_);
    heartbeat_error_ = std::move(error);
  }
  void FailRegistrations(absl::Status error) {
    absl::MutexLock lock(&mu_);
    register_error_ = std::move(error);
  }
  int registrations() {
    absl::MutexLock lock(&mu_);
    return registrations_;
  }
  pb::RegisterWorkerRequest last_registration() {
    absl::MutexLock lock(&mu_);
    return last_registration_;
  }
  int get_jobs() {
    absl::MutexLock lock(&mu_);
    return get_jobs_;
  }
  uint64_t leased() {
    absl::MutexLock lock(&mu_);
    return leased_;
  }
  // Blocks (bounded by a real minute, a liveness guard only) until `n` tasks were leased.
  void AwaitLeased(uint64_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return leased_ >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Minutes(1));
  }
  // Blocks (bounded by a real minute, a liveness guard only) until `n` heartbeats arrived.
  std::vector<pb::WorkerHeartbeatRequest> AwaitHeartbeats(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return heartbeats_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Minutes(1));
    return heartbeats_;
  }

 private:
  absl::Mutex mu_;
  std::vector<pb::WorkerHeartbeatRequest> heartbeats_ ABSL_GUARDED_BY(mu_);
  uint64_t retire_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t traced_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t trace_one_in_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status heartbeat_error_ ABSL_GUARDED_BY(mu_);
  absl::Status register_error_ ABSL_GUARDED_BY(mu_);
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  pb::RegisterWorkerRequest last_registration_ ABSL_GUARDED_BY(mu_);
  int get_jobs_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t leased_ ABSL_GUARDED_BY(mu_) = 0;
};

// Remembers the error a session ended its stream with. Thread-safe.
class RecordingSink : public BatchSink {
 public:
  void Send(OutgoingBatch) override {}
  void Fail(const absl::Status& status) override {
    absl::MutexLock lock(&mu_);
    failure_ = status;
  }
  absl::Status AwaitFailure() {
    absl::MutexLock lock(&mu_);
    auto failed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !failure_.ok(); };
    mu_.AwaitWithTimeout(absl::Condition(&failed), absl::Minutes(1));
    return failure_;
  }

 private:
  absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace worker_testing
}  // namespace stoker

#endif  // STOKER_WORKER_FAKE_COORDINATOR_FOR_TEST_H_
