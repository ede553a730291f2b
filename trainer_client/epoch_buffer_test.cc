#include "trainer_client/epoch_buffer.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/testing/epoch_buffer_plans.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace {

using ::stoker::testing::Plan;
using ::stoker::testing::PlanBatch;
using ::stoker::testing::PopAll;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Result = EpochBuffer::AddResult;

constexpr uint64_t kJob = testing::kPlanJob;
const absl::Time kT0 = testing::kPlanT0;

TEST(EpochBufferTest, HandsOutCurrentEpochInArrivalOrderThenAdvances) {
  EpochBuffer buffer(Plan(/*epochs=*/2, /*per_epoch=*/3));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 2)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 1)), Result::kAccepted);  // early: buffered
  EXPECT_EQ(buffer.later_buffered(), 1u);
  EXPECT_THAT(PopAll(buffer), ElementsAre(2, 0));
  EXPECT_EQ(buffer.current_epoch(), 0u);
  EXPECT_EQ(buffer.remaining_in_epoch(), 1u);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  // The last batch of epoch 0, then epoch 1's early batch.
  EXPECT_THAT(PopAll(buffer), ElementsAre(1, 1));
  EXPECT_EQ(buffer.current_epoch(), 1u);
  EXPECT_EQ(buffer.later_buffered(), 0u);
  EXPECT_FALSE(buffer.done());
}

TEST(EpochBufferTest, DropsDuplicatesByTaskId) {
  EpochBuffer buffer(Plan(2, 2));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(2, PlanBatch(0, 0)), Result::kDuplicate);  // still buffered
  ASSERT_TRUE(buffer.Pop().has_value());
  EXPECT_EQ(buffer.Add(2, PlanBatch(0, 0)), Result::kDuplicate);  // already handed out
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 0)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 0)), Result::kDuplicate);  // later epoch, too
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(1, 0));
  // Epoch 0 is over: anything of it is a duplicate.
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kDuplicate);
  EXPECT_EQ(buffer.accepted_total(), 3u);
}

TEST(EpochBufferTest, RejectsTasksOfOtherRanksJobsAndEpochs) {
  EpochBuffer buffer(Plan(/*epochs=*/1, /*per_epoch=*/2, /*rank=*/1, /*world=*/2));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kInvalid);  // rank 0's
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 5)), Result::kInvalid);  // 5/2 = 2 >= 2 per epoch
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 1)), Result::kInvalid);  // no epoch 1
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1, /*job=*/8)), Result::kInvalid);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 3)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(3, 1));
  EXPECT_TRUE(buffer.done());
}

// 2^40 batches an epoch (a web-scale dataset): the buffer holds what is out of order, not a
// flag per batch of the epoch (which would be 128 GiB here).
TEST(EpochBufferTest, WebScaleEpochsHoldNoStatePerBatch) {
  EpochBuffer buffer(Plan(/*epochs=*/1, /*per_epoch=*/uint64_t{1} << 40));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 2)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 5)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(2, 0, 5));
  EpochBuffer::Progress progress = buffer.progress();
  EXPECT_EQ(progress.prefix, 1u);
  EXPECT_THAT(progress.other, ElementsAre(2, 5));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 2)), Result::kDuplicate);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(1));
  progress = buffer.progress();
  EXPECT_EQ(progress.prefix, 3u);
  EXPECT_THAT(progress.other, ElementsAre(5));
  EXPECT_EQ(buffer.remaining_in_epoch(), (uint64_t{1} << 40) - 4);
}

TEST(EpochBufferTest, DoneAfterLastEpoch) {
  EpochBuffer buffer(Plan(1, 1));
  EXPECT_FALSE(buffer.done());
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  ASSERT_TRUE(buffer.Pop().has_value());
  EXPECT_TRUE(buffer.done());
  EXPECT_EQ(buffer.current_epoch(), 1u);
  EXPECT_FALSE(buffer.Pop().has_value());
  EXPECT_EQ(buffer.remaining_in_epoch(), 0u);
}

TEST(EpochBufferTest, EmptyPlanIsDoneAtOnce) {
  EpochBuffer buffer(Plan(/*epochs=*/3, /*per_epoch=*/0));
  EXPECT_TRUE(buffer.done());
  EXPECT_EQ(buffer.expected_total(), 0u);
}

TEST(EpochBufferTest, NewStreamIsGrantedItsShare) {
  EpochBuffer buffer(Plan(1, 10));
  buffer.AddStream(1, 3);
  buffer.AddStream(2, 2);
  std::vector<CreditGrant> grants = buffer.TakeCreditGrants(false, kT0);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].stream, 1u);
  EXPECT_EQ(grants[0].credits, 3u);
  EXPECT_EQ(grants[1].stream, 2u);
  EXPECT_EQ(grants[1].credits, 2u);
  EXPECT_THAT(buffer.TakeCreditGrants(false, kT0), IsEmpty());
}

TEST(EpochBufferTest, HandingOutOrDroppingReplenishesTheSourceStream) {
  EpochBuffer buffer(Plan(1, 10));
  buffer.AddStream(1, 2);
  buffer.AddStream(2, 2);
  buffer.TakeCreditGrants(false, kT0);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  EXPECT_EQ(buffer.outstanding(1), 1u);
  EXPECT_EQ(buffer.held(1), 1u);
  EXPECT_THAT(buffer.TakeCreditGrants(false, kT0), IsEmpty());  // buffered: no credit yet
  ASSERT_TRUE(buffer.Pop().has_value());
  std::vector<CreditGrant> grants = buffer.TakeCreditGrants(false, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 1u);
  EXPECT_EQ(grants[0].credits, 1u);
  // A duplicate from stream 2 is dropped: its credit comes back at once.
  EXPECT_EQ(buffer.Add(2, PlanBatch(0, 0)), Result::kDuplicate);
  grants = buffer.TakeCreditGrants(false, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].stream, 2u);
  EXPECT_EQ(grants[0].credits, 1u);
}

TEST(EpochBufferTest, ShrunkShareGrantsNothingUntilBelowIt) {
  EpochBuffer buffer(Plan(1, 10));
  buffer.AddStream(1, 4);
  buffer.TakeCreditGrants(false, kT0);
  buffer.SetShare(1, 2);
  for (uint64_t i = 0; i < 3; ++i) buffer.Add(1, PlanBatch(0, i));  // outstanding 1, held 3
  buffer.Pop();
  buffer.Pop();
  EXPECT_THAT(buffer.TakeCreditGrants(false, kT0), IsEmpty());  // 1 + 1 == 2
  buffer.Pop();
  std::vector<CreditGrant> grants = buffer.TakeCreditGrants(false, kT0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].credits, 1u);
}

TEST(EpochBufferTest, RemovedStreamGetsNoCreditButItsBatchesAreHandedOut) {
  EpochBuffer buffer(Plan(1, 2));
  buffer.AddStream(1, 1);
  buffer.TakeCreditGrants(false, kT0);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  buffer.RemoveStream(1);
  ASSERT_TRUE(buffer.Pop().has_value());
  EXPECT_THAT(buffer.TakeCreditGrants(true, kT0), IsEmpty());
}

TEST(EpochBufferTest, ExtraCreditWhenWaitingWithOnlyLaterEpochsBuffered) {
  EpochBuffer buffer(Plan(/*epochs=*/2, /*per_epoch=*/2));
  buffer.AddStream(1, 1);
  buffer.AddStream(2, 1);
  buffer.TakeCreditGrants(false, kT0);
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 0)), Result::kAccepted);  // stream 1 spent on epoch 1
  // Not waiting: nothing owed.
  EXPECT_THAT(buffer.TakeCreditGrants(false, kT0), IsEmpty());
  // Waiting for epoch 0 with only epoch 1 buffered: one extra credit per stream.
  std::vector<CreditGrant> grants = buffer.TakeCreditGrants(true, kT0);
  EXPECT_EQ(buffer.extra_credit(), 1u);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].credits, 1u);  // stream 1: 0 outstanding + 1 held → 2
  EXPECT_EQ(grants[1].credits, 1u);  // stream 2: 1 outstanding → 2
  EXPECT_THAT(buffer.TakeCreditGrants(true, kT0 + absl::Milliseconds(500)), IsEmpty());
  // The stall lasts: one more after 1 s, 2 s, 4 s (logarithmic growth).
  grants = buffer.TakeCreditGrants(true, kT0 + absl::Seconds(1));
  EXPECT_EQ(buffer.extra_credit(), 2u);
  EXPECT_EQ(grants.size(), 2u);
  buffer.TakeCreditGrants(true, kT0 + absl::Seconds(3));
  EXPECT_EQ(buffer.extra_credit(), 3u);
  buffer.TakeCreditGrants(true, kT0 + absl::Seconds(4));
  EXPECT_EQ(buffer.extra_credit(), 4u);
  // A current-epoch batch ends the stall; surplus credit is absorbed, nothing new is granted.
  EXPECT_EQ(buffer.Add(2, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_THAT(buffer.TakeCreditGrants(true, kT0 + absl::Seconds(5)), IsEmpty());
  EXPECT_EQ(buffer.extra_credit(), 0u);
}

TEST(EpochBufferTest, NoExtraCreditWithoutLaterBatches) {
  EpochBuffer buffer(Plan(2, 2));
  buffer.AddStream(1, 1);
  buffer.TakeCreditGrants(false, kT0);
  EXPECT_THAT(buffer.TakeCreditGrants(true, kT0 + absl::Seconds(60)), IsEmpty());
  EXPECT_EQ(buffer.extra_credit(), 0u);
}

}  // namespace
}  // namespace stoker
