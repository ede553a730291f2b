// CreditPolicy's level rule, stall (extra credit, its clock) and byte cap.

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/credit_policy.h"
#include "trainer_client/credit_policy_for_test.h"

namespace stoker {
namespace {

using credit_testing::Budget;
using credit_testing::Granted;
using credit_testing::kT0;

using ::testing::IsEmpty;
using ::testing::Optional;

ConsumerView Waiting(size_t buffered) {
  ConsumerView view;
  view.waiting = true;
  view.buffered = buffered;
  return view;
}

// A batch arrived on `id` and was buffered.
void Buffer(CreditPolicy& policy, StreamId id) {
  policy.OnBatch(id, kT0);
  policy.OnBuffered(id);
}

TEST(CreditPolicyLevelsTest, NewStreamIsGrantedItsShare) {
  CreditPolicy policy(Budget(5));
  policy.AddStream(1, kT0);
  policy.AddStream(2, kT0);  // even: 2; stream 1 scaled to 3
  std::vector<CreditGrant> grants = policy.TakeCreditGrants({}, kT0);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].stream, 1u);
  EXPECT_EQ(grants[0].credits, 3u);
  EXPECT_EQ(grants[1].stream, 2u);
  EXPECT_EQ(grants[1].credits, 2u);
  EXPECT_THAT(policy.TakeCreditGrants({}, kT0), IsEmpty());
}

TEST(CreditPolicyLevelsTest, HandingOutOrDroppingReplenishesTheSourceStream) {
  CreditPolicy policy(Budget(4));
  policy.AddStream(1, kT0);
  policy.AddStream(2, kT0);
  policy.TakeCreditGrants({}, kT0);
  Buffer(policy, 1);
  EXPECT_EQ(policy.outstanding(1), 1u);
  EXPECT_EQ(policy.held(1), 1u);
  EXPECT_THAT(policy.TakeCreditGrants({}, kT0), IsEmpty());  // buffered: no credit yet
  policy.OnHandedOut(1);
  std::vector<CreditGrant> grants = policy.TakeCreditGrants({}, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 1u);
  EXPECT_EQ(grants[0].credits, 1u);
  // A duplicate from stream 2 is dropped (never buffered): its credit comes back at once.
  policy.OnBatch(2, kT0);
  grants = policy.TakeCreditGrants({}, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 2u);
  EXPECT_EQ(grants[0].credits, 1u);
}

TEST(CreditPolicyLevelsTest, ShrunkShareGrantsNothingUntilBelowIt) {
  CreditPolicy policy(Budget(4));
  policy.AddStream(1, kT0);
  policy.TakeCreditGrants({}, kT0);               // 4 to stream 1
  policy.AddStream(2, kT0);                       // stream 1's share shrinks to 2
  for (int i = 0; i < 3; ++i) Buffer(policy, 1);  // outstanding 1, held 3
  policy.OnHandedOut(1);
  policy.OnHandedOut(1);
  for (const CreditGrant& grant : policy.TakeCreditGrants({}, kT0)) {
    EXPECT_NE(grant.stream, 1u);  // 1 + 1 == 2
  }
  policy.OnHandedOut(1);
  std::vector<CreditGrant> grants = policy.TakeCreditGrants({}, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 1u);
  EXPECT_EQ(grants[0].credits, 1u);
}

TEST(CreditPolicyLevelsTest, RemovedStreamGetsNoCredit) {
  CreditPolicy policy(Budget(1));
  policy.AddStream(1, kT0);
  policy.TakeCreditGrants({}, kT0);
  Buffer(policy, 1);
  policy.RemoveStream(1);
  policy.OnHandedOut(1);
  EXPECT_THAT(policy.TakeCreditGrants(Waiting(0), kT0), IsEmpty());
}

TEST(CreditPolicyLevelsTest, StallWithBatchesBufferedGrantsExtraCreditThatGrowsLogarithmically) {
  CreditPolicy policy(Budget(2));
  policy.AddStream(1, kT0);
  policy.AddStream(2, kT0);
  policy.TakeCreditGrants({}, kT0);
  Buffer(policy, 1);  // stream 1's credit spent on a batch that is not ready
  EXPECT_THAT(policy.TakeCreditGrants({}, kT0), IsEmpty());  // not waiting: nothing owed
  std::vector<CreditGrant> grants = policy.TakeCreditGrants(Waiting(1), kT0);
  EXPECT_EQ(policy.extra_credit(), 1u);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].credits, 1u);  // stream 1: 0 outstanding + 1 held → 2
  EXPECT_EQ(grants[1].credits, 1u);  // stream 2: 1 outstanding → 2
  EXPECT_THAT(policy.TakeCreditGrants(Waiting(1), kT0 + absl::Milliseconds(500)), IsEmpty());
  // The stall lasts: one more after 1 s, 2 s, 4 s.
  EXPECT_EQ(policy.TakeCreditGrants(Waiting(1), kT0 + absl::Seconds(1)).size(), 2u);
  EXPECT_EQ(policy.extra_credit(), 2u);
  policy.TakeCreditGrants(Waiting(1), kT0 + absl::Seconds(3));
  EXPECT_EQ(policy.extra_credit(), 3u);
  policy.TakeCreditGrants(Waiting(1), kT0 + absl::Seconds(4));
  EXPECT_EQ(policy.extra_credit(), 4u);
  // A ready batch ends the stall; the surplus credit is absorbed, nothing new is granted.
  ConsumerView ready = Waiting(2);
  ready.ready = true;
  EXPECT_THAT(policy.TakeCreditGrants(ready, kT0 + absl::Seconds(5)), IsEmpty());
  EXPECT_EQ(policy.extra_credit(), 0u);
  EXPECT_EQ(policy.stalled_for(kT0 + absl::Seconds(5)), std::nullopt);
}

TEST(CreditPolicyLevelsTest, StallWithNothingBufferedNeedsNoExtraButItsClockRuns) {
  CreditPolicy policy(Budget(1));
  policy.AddStream(1, kT0);
  policy.TakeCreditGrants({}, kT0);
  EXPECT_THAT(policy.TakeCreditGrants(Waiting(0), kT0), IsEmpty());
  EXPECT_THAT(policy.TakeCreditGrants(Waiting(0), kT0 + absl::Seconds(60)), IsEmpty());
  EXPECT_EQ(policy.extra_credit(), 0u);
  // One stall, one clock (hedging reads it too): a batch buffered 2 s into it gets the extra
  // of a 2 s stall.
  EXPECT_THAT(policy.stalled_for(kT0 + absl::Seconds(60)), Optional(absl::Seconds(60)));
  policy.TakeCreditGrants({}, kT0 + absl::Seconds(61));
  EXPECT_EQ(policy.stalled_for(kT0 + absl::Seconds(61)), std::nullopt);
  policy.TakeCreditGrants(Waiting(0), kT0 + absl::Seconds(62));
  Buffer(policy, 1);
  policy.TakeCreditGrants(Waiting(1), kT0 + absl::Seconds(64));
  EXPECT_EQ(policy.extra_credit(), 3u);  // 2 + floor(log2(2))
}

TEST(CreditPolicyLevelsTest, ByteCapStopsGrantsWhenSharesExceedTheBudget) {
  CreditPolicy policy(Budget(10, /*byte_cap=*/true));
  policy.AddStream(1, kT0);
  EXPECT_EQ(Granted(policy.TakeCreditGrants({}, kT0)), 10u);
  // Stream 2 opens: stream 1's share shrinks to 5, but its credit can't be revoked.
  policy.AddStream(2, kT0);
  EXPECT_THAT(policy.TakeCreditGrants({}, kT0), IsEmpty());
  for (int i = 0; i < 3; ++i) Buffer(policy, 1);
  ConsumerView three_buffered;
  three_buffered.buffered = 3;
  EXPECT_EQ(policy.committed(3), 10u);  // 7 outstanding on stream 1, 3 buffered
  EXPECT_THAT(policy.TakeCreditGrants(three_buffered, kT0), IsEmpty());
  // Handed out: 3 credits of room, all to stream 2 (stream 1 is above its level).
  for (int i = 0; i < 3; ++i) policy.OnHandedOut(1);
  const std::vector<CreditGrant> grants = policy.TakeCreditGrants({}, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 2u);
  EXPECT_EQ(grants[0].credits, 3u);
  EXPECT_EQ(policy.committed(0), 10u);
}

TEST(CreditPolicyLevelsTest, EveryStreamMayHoldOneCreditBelowABudgetOfOne) {
  CreditPolicy policy(Budget(1, /*byte_cap=*/true));
  for (StreamId id = 1; id <= 3; ++id) policy.AddStream(id, kT0);
  EXPECT_EQ(Granted(policy.TakeCreditGrants({}, kT0)), 3u);
}

TEST(CreditPolicyLevelsTest, StallExtraRaisesTheByteCapByOnePerStream) {
  CreditPolicy policy(Budget(2, /*byte_cap=*/true));
  policy.AddStream(1, kT0);
  policy.AddStream(2, kT0);
  EXPECT_EQ(Granted(policy.TakeCreditGrants({}, kT0)), 2u);
  Buffer(policy, 1);  // both credits spent on batches that are not ready
  Buffer(policy, 2);
  EXPECT_EQ(Granted(policy.TakeCreditGrants(Waiting(2), kT0)), 2u);
  EXPECT_EQ(policy.extra_credit(), 1u);
  EXPECT_EQ(policy.committed(2), 4u);  // budget 2 + 1 extra per stream
}

TEST(CreditPolicyLevelsTest, ForJobCapsOnlyWithAKnownBatchSize) {
  const CreditPolicy::Config known = CreditPolicy::ForJob(100, 30, true);
  EXPECT_EQ(known.budget_batches, 3u);
  EXPECT_TRUE(known.byte_cap);
  EXPECT_EQ(CreditPolicy::ForJob(10, 30, true).budget_batches, 1u);
  const CreditPolicy::Config unknown = CreditPolicy::ForJob(100, 0, false);
  EXPECT_EQ(unknown.budget_batches, kUnknownSizeBudgetBatches);
  EXPECT_FALSE(unknown.byte_cap);
  EXPECT_FALSE(unknown.balance);
}

}  // namespace
}  // namespace stoker
