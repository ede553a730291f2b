// EpochBuffer's byte-budget cap (SetBudget, committed) and MissingInCurrentEpoch (hedging).

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/epoch_buffer.h"
#include "trainer_client/testing/epoch_buffer_plans.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace {

using ::stoker::testing::MakeBatchMessage;
using ::stoker::testing::Plan;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t kJob = testing::kPlanJob;
const absl::Time kT0 = testing::kPlanT0;

uint64_t Granted(const std::vector<CreditGrant>& grants) {
  uint64_t total = 0;
  for (const CreditGrant& grant : grants) total += grant.credits;
  return total;
}

TEST(EpochBufferBudgetTest, GrantsStopAtTheBudgetWhenSharesExceedIt) {
  EpochBuffer buffer(Plan(1, 100));
  buffer.SetBudget(10);
  buffer.AddStream(1, 8);
  buffer.AddStream(2, 2);
  EXPECT_EQ(Granted(buffer.TakeCreditGrants(false, kT0)), 10u);
  // Stream 1's share shrinks, stream 2's grows: credit can't be revoked, so stream 2 waits.
  buffer.SetShare(1, 2);
  buffer.SetShare(2, 8);
  EXPECT_THAT(buffer.TakeCreditGrants(false, kT0), IsEmpty());
  EXPECT_EQ(buffer.committed(), 10u);
  // Stream 1 delivers 3 batches and they are handed out: 3 credits of room, all to stream 2.
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(buffer.Add(1, Batch(MakeBatchMessage(kJob, 0, i))),
              EpochBuffer::AddResult::kAccepted);
  }
  EXPECT_EQ(buffer.committed(), 10u);  // 5 outstanding on 1, 2 on 2, 3 buffered
  while (buffer.Pop()) {
  }
  const std::vector<CreditGrant> grants = buffer.TakeCreditGrants(false, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 2u);
  EXPECT_EQ(grants[0].credits, 3u);
  EXPECT_EQ(buffer.committed(), 10u);
}

TEST(EpochBufferBudgetTest, EveryStreamMayHoldOneCreditBelowABudgetOfOne) {
  EpochBuffer buffer(Plan(1, 100));
  buffer.SetBudget(1);
  for (StreamId id = 1; id <= 3; ++id) buffer.AddStream(id, 1);
  EXPECT_EQ(Granted(buffer.TakeCreditGrants(false, kT0)), 3u);
}

TEST(EpochBufferBudgetTest, StallExtraRaisesTheCapByOnePerStream) {
  EpochBuffer buffer(Plan(2, 2));
  buffer.SetBudget(2);
  buffer.AddStream(1, 1);
  buffer.AddStream(2, 1);
  EXPECT_EQ(Granted(buffer.TakeCreditGrants(false, kT0)), 2u);
  // Both credits are spent on epoch 1 while epoch 0 is still missing: a stall.
  ASSERT_EQ(buffer.Add(1, Batch(MakeBatchMessage(kJob, 1, 0))), EpochBuffer::AddResult::kAccepted);
  ASSERT_EQ(buffer.Add(2, Batch(MakeBatchMessage(kJob, 1, 1))), EpochBuffer::AddResult::kAccepted);
  EXPECT_EQ(Granted(buffer.TakeCreditGrants(/*consumer_waiting=*/true, kT0)), 2u);
  EXPECT_EQ(buffer.extra_credit(), 1u);
  EXPECT_EQ(buffer.committed(), 4u);  // budget 2 + 1 extra per stream
}

TEST(EpochBufferBudgetTest, MissingInCurrentEpochListsThisRanksTasksInPlanOrder) {
  EpochBuffer buffer(Plan(2, 4, /*rank=*/1, /*world=*/2));  // indices 1, 3, 5, 7
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(1, 3, 5, 7));
  buffer.AddStream(1, 8);
  ASSERT_EQ(buffer.Add(1, Batch(MakeBatchMessage(kJob, 0, 3))), EpochBuffer::AddResult::kAccepted);
  ASSERT_EQ(buffer.Add(1, Batch(MakeBatchMessage(kJob, 0, 1))), EpochBuffer::AddResult::kAccepted);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(5, 7));
  EXPECT_THAT(buffer.MissingInCurrentEpoch(1), ElementsAre(5));
  while (buffer.Pop()) {
  }
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(5, 7));  // handed out ≠ missing
}

TEST(EpochBufferBudgetTest, MissingInAResumedEpochFollowsItsDealWithoutWhatWasConsumed) {
  EpochBuffer::Config config = Plan(2, 4, /*rank=*/0, /*world=*/2);
  config.resumed = true;
  config.first_epoch = 0;
  config.first_deal = {4, 9, 2, 12};  // a re-dealt epoch, 12 a pad
  config.first_consumed = {true, false, false, false};
  EpochBuffer buffer(config);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(9, 2, 12));
  buffer.AddStream(1, 8);
  ASSERT_EQ(buffer.Add(1, Batch(MakeBatchMessage(kJob, 0, 2))), EpochBuffer::AddResult::kAccepted);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(9, 12));
}

}  // namespace
}  // namespace stoker
