// Backup leases of overdue tasks (coordinator/hedge_book.h) through the Coordinator's RPCs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/lease_pairs_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"

namespace stoker {
namespace {

using stoker::v1::TaskId;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using P = EpochBatch;

TaskId Task(uint64_t job, uint32_t epoch, uint64_t index) {
  TaskId task;
  task.set_job_id(job);
  task.set_epoch(epoch);
  task.set_batch_index(index);
  return task;
}

class HedgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stoker::v1::OpenJobRequest open;
    open.set_name("job");
    *open.mutable_spec() = SmallJobSpec(/*world_size=*/1, /*epochs=*/1);  // 10 batches
    auto job = coordinator_.OpenJob(open);
    ASSERT_THAT(job, IsOk());
    job_ = job->job_id();
    slow_ = Register("slow:1");
    fast_ = Register("fast:1");
  }

  uint64_t Register(const std::string& address) {
    return RegisterTestWorker(coordinator_, address, 1);
  }

  absl::StatusOr<stoker::v1::LeaseTasksResponse> Lease(uint64_t worker, uint32_t max) {
    stoker::v1::LeaseTasksRequest request;
    request.set_worker_id(worker);
    request.set_job_id(job_);
    request.set_rank(0);
    request.set_max_tasks(max);
    return coordinator_.LeaseTasks(request);
  }

  absl::StatusOr<stoker::v1::ClientHeartbeatResponse> ReportOverdue(
      const std::vector<TaskId>& overdue, const std::vector<TaskId>& consumed = {}) {
    stoker::v1::ClientHeartbeatRequest request;
    request.set_job_id(job_);
    request.set_rank(0);
    request.set_client_id("client");
    for (const TaskId& task : overdue) *request.add_overdue() = task;
    for (const TaskId& task : consumed) *request.add_received() = task;
    return coordinator_.ClientHeartbeat(request);
  }

  FakeClock clock_;
  Coordinator coordinator_{TestCoordinatorConfig(), &clock_, nullptr, TestSourceFactory()};
  uint64_t job_ = 0;
  uint64_t slow_ = 0;
  uint64_t fast_ = 0;
};

TEST_F(HedgeTest, OverdueLeasedTaskGoesToAnotherWorkerFirst) {
  ASSERT_THAT(Lease(slow_, 2), IsOk());  // tasks 0, 1 to the slow worker
  ASSERT_THAT(ReportOverdue({Task(job_, 0, 0), Task(job_, 0, 1)}), IsOk());
  // The holder does not get its own task as a backup: it gets pending tasks.
  auto own = Lease(slow_, 1);
  ASSERT_THAT(own, IsOk());
  EXPECT_THAT(Pairs(*own), ElementsAre(P{0, 2}));
  auto backup = Lease(fast_, 3);
  ASSERT_THAT(backup, IsOk());
  EXPECT_THAT(Pairs(*backup), ElementsAre(P{0, 0}, P{0, 1}, P{0, 3}));
  // Each task is hedged once.
  ASSERT_THAT(ReportOverdue({Task(job_, 0, 0)}), IsOk());
  auto again = Lease(fast_, 1);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(Pairs(*again), ElementsAre(P{0, 4}));
}

TEST_F(HedgeTest, PendingAndDoneTasksAreNotHedged) {
  ASSERT_THAT(Lease(slow_, 1), IsOk());  // task 0
  // Task 0 is done (consumed) in the same heartbeat; task 5 was never leased.
  ASSERT_THAT(ReportOverdue({Task(job_, 0, 0), Task(job_, 0, 5)}, {Task(job_, 0, 0)}), IsOk());
  auto lease = Lease(fast_, 2);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 1}, P{0, 2}));
}

TEST_F(HedgeTest, BackupOfATaskDoneMeanwhileIsDropped) {
  ASSERT_THAT(Lease(slow_, 1), IsOk());
  ASSERT_THAT(ReportOverdue({Task(job_, 0, 0)}), IsOk());
  ASSERT_THAT(ReportOverdue({}, {Task(job_, 0, 0)}), IsOk());  // the primary delivered
  auto lease = Lease(fast_, 1);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 1}));
}

TEST_F(HedgeTest, TheClientsReportOfTheBackupCopyCompletesTheTask) {
  ASSERT_THAT(Lease(slow_, 1), IsOk());
  ASSERT_THAT(ReportOverdue({Task(job_, 0, 0)}), IsOk());
  ASSERT_THAT(Lease(fast_, 1), IsOk());  // the backup of task 0
  stoker::v1::WorkerHeartbeatRequest heartbeat;
  heartbeat.set_worker_id(fast_);
  *heartbeat.add_delivered() = Task(job_, 0, 0);
  ASSERT_THAT(coordinator_.WorkerHeartbeat(heartbeat), IsOk());
  auto done = [&] {
    return coordinator_.InspectState(
        [&](const ClusterState& state) { return state.IsTaskDone(Task(job_, 0, 0)); });
  };
  EXPECT_FALSE(done());  // a worker's report completes nothing
  ASSERT_THAT(ReportOverdue({}, {Task(job_, 0, 0)}), IsOk());  // the client's does
  EXPECT_TRUE(done());
  // The slow worker's later hand-back of task 0 is harmless.
  stoker::v1::WorkerHeartbeatRequest slow;
  slow.set_worker_id(slow_);
  *slow.add_returned() = Task(job_, 0, 0);
  ASSERT_THAT(coordinator_.WorkerHeartbeat(slow), IsOk());
  auto lease = Lease(fast_, 1);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 1}));
}

TEST_F(HedgeTest, OverdueTaskOfAnotherJobOrRankIsInvalidArgument) {
  EXPECT_THAT(ReportOverdue({Task(job_ + 1, 0, 0)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overdue[0]")));
  EXPECT_THAT(ReportOverdue({Task(job_, 0, 0), Task(job_, 5, 0)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overdue[1]")));
}

}  // namespace
}  // namespace stoker
