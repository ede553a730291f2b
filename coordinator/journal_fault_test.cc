// The journal under injected disk faults (FakeJournalEnv): a failing fdatasync latches the
// coordinator into UNAVAILABLE naming the cause (and a metric), a short write is recovered at
// replay, a full disk is reported; compaction writes its file outside the coordinator's lock; a
// group commit is timed on the injected clock.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/fake_journal_env_for_test.h"
#include "coordinator/journal.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

constexpr char kPath[] = "/journal";

pb::OpenJobRequest Open(const std::string& name) {
  pb::OpenJobRequest request;
  request.set_name(name);
  *request.mutable_spec() = SmallJobSpec(1);
  return request;
}

class JournalFaultTest : public ::testing::Test {
 protected:
  FakeJournalEnv env_;
  FakeClock clock_;
  const CoordinatorConfig config_ = TestCoordinatorConfig();
};

TEST_F(JournalFaultTest, FsyncFailureLatchesTheCoordinatorIntoAClearError) {
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  ASSERT_THAT(coordinator.OpenJob(Open("a")), IsOk());
  const uint64_t worker_id = RegisterTestWorker(coordinator, "w:0", 1);
  EXPECT_FALSE(coordinator.store_stats()->failed);
  env_.FailNextSync(absl::InternalError("journal /journal: fdatasync: Input/output error"));
  EXPECT_THAT(coordinator.OpenJob(Open("b")),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("journal failed (INTERNAL: journal /journal: fdatasync: "
                                 "Input/output error")));
  // The fault is gone, but what the file holds is unknown: nothing is acknowledged any more,
  // and every call that changes state says so, retryably, naming the cause.
  EXPECT_TRUE(coordinator.store_stats()->failed);
  pb::RegisterWorkerRequest worker;
  worker.set_address("w:1");
  worker.set_cores(1);
  EXPECT_THAT(coordinator.RegisterWorker(worker),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("the journal failed and takes no more writes: restart")));
  EXPECT_THAT(coordinator.OpenJob(Open("c")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("fdatasync")));
  pb::LeaseTasksRequest lease;
  lease.set_worker_id(worker_id);
  lease.set_max_tasks(1);
  EXPECT_THAT(coordinator.LeaseTasks(lease),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("fdatasync")));
  pb::WorkerHeartbeatRequest heartbeat;
  heartbeat.set_worker_id(worker_id);
  EXPECT_THAT(coordinator.WorkerHeartbeat(heartbeat),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("fdatasync")));
  EXPECT_THAT(coordinator.ClientHeartbeat(pb::ClientHeartbeatRequest()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("fdatasync")));
  EXPECT_THAT(coordinator.StoreUsable(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("fdatasync")));
}

TEST_F(JournalFaultTest, AShortWriteIsRecoveredAtReplay) {
  uint64_t kept_job = 0;
  {
    FileJournal journal(kPath, &env_);
    Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    auto kept = coordinator.OpenJob(Open("kept"));
    ASSERT_THAT(kept, IsOk());
    kept_job = kept->job_id();
    const size_t whole = env_.Contents(kPath).size();
    env_.ShortWriteNext(5);  // the process dies 5 bytes into the next record
    EXPECT_THAT(coordinator.OpenJob(Open("torn")),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("short write")));
    ASSERT_EQ(env_.Contents(kPath).size(), whole + 5);
  }
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  coordinator.InspectState([&](const ClusterState& state) {
    EXPECT_NE(state.FindJob(kept_job), nullptr);
    EXPECT_EQ(state.FindJobByName("default", "torn"), nullptr);
  });
  EXPECT_THAT(coordinator.OpenJob(Open("after")), IsOk());  // and it writes again
}

TEST_F(JournalFaultTest, AFullDiskIsReportedNamingIt) {
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  env_.SetDiskBytes(env_.Contents(kPath).size() + 10);
  EXPECT_THAT(coordinator.OpenJob(Open("a")),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("(RESOURCE_EXHAUSTED: journal /journal: write: No space left on "
                                 "device")));
}

// A group commit is timed on the injected clock: the histogram holds exactly the fdatasync's
// fake duration.
TEST_F(JournalFaultTest, AGroupCommitIsTimedOnTheInjectedClock) {
  FileJournal journal(kPath, &env_, &clock_);
  ASSERT_THAT(journal.Load(), IsOk());
  env_.SetSyncHook([this] { clock_.Advance(absl::Milliseconds(250)); });
  pb::StateUpdate update;
  update.mutable_start_incarnation()->set_incarnation(7);
  ASSERT_THAT(journal.Sync(journal.Add(update)), IsOk());
  const StateStore::Stats stats = journal.stats();
  EXPECT_EQ(stats.sync_seconds.count(), 1u);
  EXPECT_DOUBLE_EQ(stats.sync_seconds.sum(), 0.25);
}

// A heartbeat whose overdue list is bad changes nothing: its consumed tasks are not journaled.
TEST_F(JournalFaultTest, ABadOverdueListJournalsNothing) {
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  auto job = coordinator.OpenJob(Open("a"));
  ASSERT_THAT(job, IsOk());
  const size_t before = env_.Contents(kPath).size();
  pb::ClientHeartbeatRequest heartbeat;
  heartbeat.set_job_id(job->job_id());
  heartbeat.set_client_id("c");
  pb::TaskId* consumed = heartbeat.add_received();
  consumed->set_job_id(job->job_id());
  pb::TaskId* overdue = heartbeat.add_overdue();
  overdue->set_job_id(job->job_id());
  overdue->set_batch_index(1'000'000);
  EXPECT_THAT(coordinator.ClientHeartbeat(heartbeat),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overdue[0]: ")));
  EXPECT_EQ(env_.Contents(kPath).size(), before);
  coordinator.InspectState(
      [&](const ClusterState& state) { EXPECT_FALSE(state.IsTaskDone(*consumed)); });
}

// Compaction takes its snapshot under the coordinator's lock and writes the file without it:
// while the new journal is being written, the state can be read (and calls queue only on the
// journal). What was added meanwhile is kept.
TEST_F(JournalFaultTest, CompactionWritesOutsideTheCoordinatorsLock) {
  CoordinatorConfig config = config_;
  config.max_id_bytes = 8192;
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  absl::Notification writing;
  absl::Notification release;
  env_.SetReplaceHook([&] {
    if (!writing.HasBeenNotified()) writing.Notify();
    release.WaitForNotification();
  });
  // Registrations of 8 KiB addresses until the journal passes kCompactBytes and one compacts.
  std::thread registering([&] {
    for (int i = 0; i < 200 && !writing.HasBeenNotified(); ++i) {
      RegisterTestWorker(coordinator, absl::StrCat(i, ":", std::string(8000, 'a')), 1);
    }
  });
  writing.WaitForNotification();
  const size_t workers =
      coordinator.InspectState([](const ClusterState& state) { return state.Workers().size(); });
  release.Notify();
  registering.join();
  EXPECT_GT(workers, 0u);
  const size_t registered =
      coordinator.InspectState([](const ClusterState& state) { return state.Workers().size(); });
  FileJournal reopened(kPath, &env_);
  Coordinator recovered(config, &clock_, &reopened, TestSourceFactory());
  ASSERT_THAT(recovered.Recover(), IsOk());
  EXPECT_EQ(
      recovered.InspectState([](const ClusterState& state) { return state.Workers().size(); }),
      registered);
}

TEST_F(JournalFaultTest, AFullDiskAtRecoveryIsReported) {
  env_.SetDiskBytes(4);  // not even the magic fits
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  EXPECT_THAT(coordinator.Recover(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("No space left on device")));
}

}  // namespace
}  // namespace stoker
