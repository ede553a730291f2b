#ifndef STOKER_COORDINATOR_STATE_UPDATES_FOR_TEST_H_
#define STOKER_COORDINATOR_STATE_UPDATES_FOR_TEST_H_

// StateUpdate builders and a fixture with one job and two workers, for the ClusterState tests.
// Tests only.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/cluster_state.h"
#include "coordinator/job_validation.h"
#include "coordinator/lease_pairs_for_test.h"
#include "coordinator/source_factory_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/journal.pb.h"

namespace stoker {

// Tests only: these short names live in namespace stoker because no library includes this file.
using stoker::v1::StateUpdate;
using stoker::v1::TaskId;

inline constexpr uint64_t kJob = 1;
inline constexpr uint64_t kWorkerA = 1;
inline constexpr uint64_t kWorkerB = 2;

inline TaskId Task(uint32_t epoch, uint64_t batch, uint64_t job = kJob) {
  TaskId task;
  task.set_job_id(job);
  task.set_epoch(epoch);
  task.set_batch_index(batch);
  return task;
}

// A create_job as OpenJob makes it: with the geometry computed from the spec's dataset (an
// invalid spec gets none, so that Apply reports the bad field).
inline StateUpdate CreateJob(uint64_t id, const std::string& name,
                             const stoker::v1::JobSpec& spec) {
  StateUpdate update;
  update.mutable_create_job()->set_job_id(id);
  update.mutable_create_job()->set_name(name);
  *update.mutable_create_job()->mutable_spec() = spec;
  absl::StatusOr<stoker::v1::JobGeometry> geometry = ComputeJobGeometry(spec, TestSourceFactory());
  if (geometry.ok()) *update.mutable_create_job()->mutable_geometry() = *geometry;
  return update;
}

inline StateUpdate Register(uint64_t id, const std::string& address, uint32_t cores = 2,
                            int64_t now = 0) {
  StateUpdate update;
  update.mutable_register_worker()->set_worker_id(id);
  update.mutable_register_worker()->set_address(address);
  update.mutable_register_worker()->set_cores(cores);
  update.mutable_register_worker()->set_now_unix_ms(now);
  return update;
}

inline StateUpdate Heartbeat(uint64_t worker, int64_t now) {
  StateUpdate update;
  update.mutable_worker_heartbeat()->set_worker_id(worker);
  update.mutable_worker_heartbeat()->set_now_unix_ms(now);
  return update;
}

inline StateUpdate Lease(uint64_t worker, const std::vector<TaskId>& tasks, int64_t expires) {
  StateUpdate update;
  update.mutable_lease_tasks()->set_worker_id(worker);
  update.mutable_lease_tasks()->set_expires_unix_ms(expires);
  for (const TaskId& task : tasks) *update.mutable_lease_tasks()->add_tasks() = task;
  return update;
}

inline StateUpdate Complete(const std::vector<TaskId>& tasks) {
  StateUpdate update;
  for (const TaskId& task : tasks) *update.mutable_complete_tasks()->add_tasks() = task;
  return update;
}

inline StateUpdate Remove(uint64_t worker) {
  StateUpdate update;
  update.mutable_remove_worker()->set_worker_id(worker);
  return update;
}

inline StateUpdate Expire(int64_t now) {
  StateUpdate update;
  update.mutable_expire_leases()->set_now_unix_ms(now);
  return update;
}

using P = EpochBatch;

// A state with job 1 (2 ranks × 2 epochs × 5 batches per rank) and workers A and B.
class ClusterStateFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_THAT(state_.Apply(CreateJob(kJob, "job", SmallJobSpec())), IsOk());
    ASSERT_THAT(state_.Apply(Register(kWorkerA, "a:1")), IsOk());
    ASSERT_THAT(state_.Apply(Register(kWorkerB, "b:1")), IsOk());
  }
  ClusterState state_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_STATE_UPDATES_FOR_TEST_H_
