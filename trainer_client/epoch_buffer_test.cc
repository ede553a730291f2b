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
using Result = EpochBuffer::AddResult;

TEST(EpochBufferTest, HandsOutCurrentEpochInArrivalOrderThenAdvances) {
  EpochBuffer buffer(Plan(/*epochs=*/2, /*per_epoch=*/3));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 2)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 1)), Result::kAccepted);  // early: buffered
  EXPECT_THAT(PopAll(buffer), ElementsAre(2, 0));
  EXPECT_EQ(buffer.current_epoch(), 0u);
  EXPECT_EQ(buffer.remaining_in_epoch(), 1u);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  // The last batch of epoch 0, then epoch 1's early batch.
  EXPECT_THAT(PopAll(buffer), ElementsAre(1, 1));
  EXPECT_EQ(buffer.current_epoch(), 1u);
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

TEST(EpochBufferTest, PopSaysWhichStreamABatchCameOn) {
  EpochBuffer buffer(Plan(1, 2));
  EXPECT_EQ(buffer.Add(4, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(9, PlanBatch(0, 0)), Result::kAccepted);
  StreamId stream = 0;
  ASSERT_TRUE(buffer.Pop(&stream).has_value());
  EXPECT_EQ(stream, 4u);
  ASSERT_TRUE(buffer.Pop(&stream).has_value());
  EXPECT_EQ(stream, 9u);
}

TEST(EpochBufferTest, MissingInCurrentEpochListsThisRanksTasksInPlanOrder) {
  EpochBuffer buffer(Plan(2, 4, /*rank=*/1, /*world=*/2));  // indices 1, 3, 5, 7
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(1, 3, 5, 7));
  ASSERT_EQ(buffer.Add(1, PlanBatch(0, 3)), Result::kAccepted);
  ASSERT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(5, 7));
  EXPECT_THAT(buffer.MissingInCurrentEpoch(1), ElementsAre(5));
  PopAll(buffer);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(5, 7));  // handed out ≠ missing
}

TEST(EpochBufferTest, MissingInAResumedEpochFollowsItsDealWithoutWhatWasConsumed) {
  EpochBuffer::Config config = Plan(2, 4, /*rank=*/0, /*world=*/2);
  config.resumed = true;
  config.first_epoch = 0;
  config.first_deal = {4, 9, 2, 12};  // a re-dealt epoch, 12 a pad
  config.first_consumed = {true, false, false, false};
  EpochBuffer buffer(config);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(9, 2, 12));
  ASSERT_EQ(buffer.Add(1, PlanBatch(0, 2)), Result::kAccepted);
  EXPECT_THAT(buffer.MissingInCurrentEpoch(10), ElementsAre(9, 12));
}

}  // namespace
}  // namespace stoker
