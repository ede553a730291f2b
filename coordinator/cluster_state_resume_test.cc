// ClusterState: resume_rank (a trainer rank restarted from resume tokens).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "coordinator/cluster_state.h"
#include "coordinator/state_updates_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ClusterStateResumeTest = ClusterStateFixture;

StateUpdate Resume(uint32_t rank, uint32_t epoch, const std::vector<uint64_t>& batches,
                   uint64_t job = kJob) {
  StateUpdate update;
  update.mutable_resume_rank()->set_job_id(job);
  update.mutable_resume_rank()->set_rank(rank);
  update.mutable_resume_rank()->set_epoch(epoch);
  for (uint64_t g : batches) update.mutable_resume_rank()->add_batches(g);
  return update;
}

// Job 1 has 10 global batches per epoch; a resumed epoch may use indices below 24.
TEST_F(ClusterStateResumeTest, ResumeRankRestartsItsSequenceAndRevokesItsLeases) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 0)})), IsOk());
  ASSERT_THAT(state_.Apply(Resume(0, 0, {4, 8, 10})), IsOk());  // 10: a pad batch

  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 0, 10)),
              ElementsAre(P{0, 4}, P{0, 8}, P{0, 10}, P{1, 0}, P{1, 2}, P{1, 4}, P{1, 6}, P{1, 8}));
  RankProgressSummary summary = state_.RankSummary(kJob, 0);
  EXPECT_EQ(summary.total, 8u);
  EXPECT_EQ(summary.done_watermark, 0u);
  EXPECT_EQ(summary.leased, 0u);
  EXPECT_THAT(Pairs(state_.RevokedLeases(kWorkerA)), ElementsAre(P{0, 2}));
  EXPECT_THAT(state_.LeasesOf(kWorkerA), IsEmpty());
  EXPECT_EQ(state_.RankOfTask(Task(0, 10)).value_or(9), 0u);
  // Rank 1 is untouched.
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 1, 2)), ElementsAre(P{0, 1}, P{0, 3}));
}

TEST_F(ClusterStateResumeTest, TasksOfTheResumedRanksPastAreDoneAndIgnored) {
  ASSERT_THAT(state_.Apply(Resume(0, 1, {2, 6})), IsOk());
  // Late acknowledgements of the old incarnation: epoch 0, and epoch-1 batches not listed.
  ASSERT_THAT(state_.Apply(Complete({Task(0, 0), Task(0, 8), Task(1, 0), Task(1, 21)})), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).done_watermark, 0u);
  EXPECT_THAT(state_.Apply(Lease(kWorkerA, {Task(1, 0)}, 100)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is done")));
  EXPECT_THAT(state_.Apply(Complete({Task(1, 24)})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("10 batches")));
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(1, 2), Task(1, 6)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(1, 6), Task(1, 2)})), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).done_watermark, 2u);
  EXPECT_TRUE(state_.RankFinished(kJob, 0));
  EXPECT_FALSE(state_.JobFinished(kJob));
}

TEST_F(ClusterStateResumeTest, ResumeAfterTheLastEpochFinishesTheRank) {
  ASSERT_THAT(state_.Apply(Resume(1, 2, {})), IsOk());
  EXPECT_TRUE(state_.RankFinished(kJob, 1));
  EXPECT_THAT(state_.PendingTasks(kJob, 1, 5), IsEmpty());
  ASSERT_THAT(state_.Apply(Resume(0, 2, {})), IsOk());
  EXPECT_TRUE(state_.JobFinished(kJob));
  // A finished rank may resume again (from an older checkpoint).
  ASSERT_THAT(state_.Apply(Resume(0, 1, {0})), IsOk());
  EXPECT_FALSE(state_.JobFinished(kJob));
}

TEST_F(ClusterStateResumeTest, ResumeRankErrors) {
  EXPECT_THAT(state_.Apply(Resume(0, 0, {}, /*job=*/9)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 9")));
  EXPECT_THAT(state_.Apply(Resume(2, 0, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resume_rank.rank")));
  EXPECT_THAT(state_.Apply(Resume(0, 3, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resume_rank.epoch")));
  EXPECT_THAT(state_.Apply(Resume(0, 2, {1})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resume_rank.epoch")));
  EXPECT_THAT(state_.Apply(Resume(0, 0, {4, 4})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resume_rank.batches[1]")));
  EXPECT_THAT(state_.Apply(Resume(0, 0, {24})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit 24")));
  EXPECT_EQ(state_.RankSummary(kJob, 0).total, 10u);  // unchanged
}

TEST_F(ClusterStateResumeTest, SnapshotKeepsResumedRanks) {
  ASSERT_THAT(state_.Apply(Resume(1, 1, {3, 9, 11})), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(1, 3), Task(1, 11)})), IsOk());
  StateUpdate restore;
  *restore.mutable_restore() = state_.MakeSnapshot();
  ClusterState copy;
  ASSERT_THAT(copy.Apply(restore), IsOk());
  RankProgressSummary rank1 = copy.RankSummary(kJob, 1);
  EXPECT_EQ(rank1.total, 3u);
  EXPECT_EQ(rank1.done_watermark, 1u);
  EXPECT_EQ(rank1.done_above_watermark, 1u);
  EXPECT_THAT(Pairs(copy.PendingTasks(kJob, 1, 5)), ElementsAre(P{1, 9}));
  EXPECT_EQ(copy.RankOfTask(Task(1, 11)).value_or(9), 1u);
  // The copy's snapshot is the same.
  EXPECT_EQ(copy.MakeSnapshot().SerializeAsString(), state_.MakeSnapshot().SerializeAsString());
}

}  // namespace
}  // namespace stoker
