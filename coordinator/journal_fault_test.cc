// The journal under injected disk faults (FakeJournalEnv): a failing fdatasync latches the
// coordinator into a clear error, a short write is recovered at replay, a full disk is reported.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

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
  Coordinator coordinator(config_, &clock_, &journal);
  ASSERT_THAT(coordinator.Recover(), IsOk());
  ASSERT_THAT(coordinator.OpenJob(Open("a")), IsOk());
  env_.FailNextSync(absl::InternalError("journal /journal: fdatasync: Input/output error"));
  EXPECT_THAT(coordinator.OpenJob(Open("b")),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("fdatasync: Input/output error")));
  // The fault is gone, but what the file holds is unknown: nothing is acknowledged any more.
  pb::RegisterWorkerRequest worker;
  worker.set_address("w:1");
  worker.set_cores(1);
  EXPECT_THAT(coordinator.RegisterWorker(worker),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("the journal failed and takes no more writes: restart")));
  EXPECT_THAT(coordinator.OpenJob(Open("c")),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("fdatasync")));
}

TEST_F(JournalFaultTest, AShortWriteIsRecoveredAtReplay) {
  uint64_t kept_job = 0;
  {
    FileJournal journal(kPath, &env_);
    Coordinator coordinator(config_, &clock_, &journal);
    ASSERT_THAT(coordinator.Recover(), IsOk());
    auto kept = coordinator.OpenJob(Open("kept"));
    ASSERT_THAT(kept, IsOk());
    kept_job = kept->job_id();
    const size_t whole = env_.Contents(kPath).size();
    env_.ShortWriteNext(5);  // the process dies 5 bytes into the next record
    EXPECT_THAT(coordinator.OpenJob(Open("torn")),
                StatusIs(absl::StatusCode::kInternal, HasSubstr("short write")));
    ASSERT_EQ(env_.Contents(kPath).size(), whole + 5);
  }
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal);
  ASSERT_THAT(coordinator.Recover(), IsOk());
  coordinator.InspectState([&](const ClusterState& state) {
    EXPECT_NE(state.FindJob(kept_job), nullptr);
    EXPECT_EQ(state.FindJobByName("torn"), nullptr);
  });
  EXPECT_THAT(coordinator.OpenJob(Open("after")), IsOk());  // and it writes again
}

TEST_F(JournalFaultTest, AFullDiskIsReportedAsResourceExhausted) {
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal);
  ASSERT_THAT(coordinator.Recover(), IsOk());
  env_.SetDiskBytes(env_.Contents(kPath).size() + 10);
  EXPECT_THAT(coordinator.OpenJob(Open("a")),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("journal /journal: write: No space left on device")));
}

TEST_F(JournalFaultTest, AFullDiskAtRecoveryIsReported) {
  env_.SetDiskBytes(4);  // not even the magic fits
  FileJournal journal(kPath, &env_);
  Coordinator coordinator(config_, &clock_, &journal);
  EXPECT_THAT(coordinator.Recover(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("No space left on device")));
}

}  // namespace
}  // namespace stoker
