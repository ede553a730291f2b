// HedgeBook (hedge_book.h) against a ClusterState: which overdue tasks it queues, which backups
// a worker takes, and what it forgets. The Coordinator's side is in hedge_test.cc.

#include "coordinator/hedge_book.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "coordinator/state_updates_for_test.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr int64_t kExpires = 60'000;

// Job 1 with tasks (0, 0) and (0, 2) of rank 0 leased to worker A, (0, 4) to worker B.
class HedgeBookTest : public ClusterStateFixture {
 protected:
  void SetUp() override {
    ClusterStateFixture::SetUp();
    ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, kExpires)), IsOk());
    ASSERT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 4)}, kExpires)), IsOk());
  }
  HedgeBook book_;
};

TEST_F(HedgeBookTest, QueuesALeasedTaskOnceAndNamesItsHolder) {
  EXPECT_THAT(book_.HedgeIfLeased(state_, Task(0, 0), 0), Optional(kWorkerA));
  EXPECT_EQ(book_.HedgeIfLeased(state_, Task(0, 0), 0), std::nullopt);  // hedged before
  EXPECT_EQ(book_.HedgeIfLeased(state_, Task(0, 6), 0), std::nullopt);  // pending, not leased
  EXPECT_EQ(book_.queued(), 1u);
  EXPECT_EQ(book_.hedged_total(), 1u);
}

TEST_F(HedgeBookTest, TakeBackupsSkipsTheHolderAndDropsTasksDoneOrNoLongerLeased) {
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 0), 0).has_value());
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 2), 0).has_value());
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 4), 0).has_value());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 2)})), IsOk());
  // Worker A holds (0, 0): it stays for another worker; (0, 2) is done: dropped.
  EXPECT_THAT(Pairs(book_.TakeBackups(state_, kJob, 0, kWorkerA, 10)), ElementsAre(P{0, 4}));
  EXPECT_EQ(book_.queued(), 1u);
  ASSERT_THAT(state_.Apply(Expire(kExpires)), IsOk());  // (0, 0) is pending again
  EXPECT_THAT(book_.TakeBackups(state_, kJob, 0, kWorkerB, 10), IsEmpty());
  EXPECT_EQ(book_.queued(), 0u);
}

TEST_F(HedgeBookTest, TakeBackupsTakesAtMostMaxInTheOrderQueued) {
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 4), 0).has_value());
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 0), 0).has_value());
  EXPECT_THAT(Pairs(book_.TakeBackups(state_, kJob, 0, 99, 1)), ElementsAre(P{0, 4}));
  EXPECT_THAT(book_.TakeBackups(state_, kJob, /*rank=*/1, 99, 1), IsEmpty());
  EXPECT_THAT(Pairs(book_.TakeBackups(state_, kJob, 0, 99, 1)), ElementsAre(P{0, 0}));
}

TEST_F(HedgeBookTest, PruneStaleForgetsDoneTasksAndRetiredJobsOnly) {
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 0), 0).has_value());
  ASSERT_TRUE(book_.HedgeIfLeased(state_, Task(0, 2), 0).has_value());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 2)})), IsOk());
  book_.PruneStale(state_);
  EXPECT_EQ(book_.queued(), 1u);
  StateUpdate retire;
  retire.mutable_retire_job()->set_job_id(kJob);
  ASSERT_THAT(state_.Apply(retire), IsOk());
  book_.PruneStale(state_);
  EXPECT_EQ(book_.queued(), 0u);
  EXPECT_EQ(book_.hedged_total(), 2u);  // a counter: pruning does not lower it
}

}  // namespace
}  // namespace stoker
