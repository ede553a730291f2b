// EpochBuffer: ordered mode and a resumed first epoch.

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/epoch_buffer.h"
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

TEST(EpochBufferOrderedTest, HandsOutInPlanOrder) {
  EpochBuffer buffer(Plan(/*epochs=*/2, /*per_epoch=*/3, /*rank=*/1, /*world=*/2, true));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 5)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 1)), Result::kAccepted);
  EXPECT_FALSE(buffer.has_ready());  // waits for batch 1
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(1));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 3)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(3, 5, 1));
  EXPECT_EQ(buffer.current_epoch(), 1u);
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 1)), Result::kDuplicate);
}

TEST(EpochBufferOrderedTest, LaterPositionsAreNotReadyWhileTheHeadOfLineIsMissing) {
  EpochBuffer buffer(Plan(1, 3, 0, 1, true));
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kAccepted);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 2)), Result::kAccepted);
  EXPECT_FALSE(buffer.has_ready());  // the stall that CreditPolicy's extra credit resolves
  EXPECT_EQ(buffer.buffered(), 2u);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 0)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(0, 1, 2));
  EXPECT_TRUE(buffer.done());
}

EpochBuffer::Config Resumed(bool ordered) {
  // Rank 1 of 2 resumed at epoch 1 with deal {3, 4, 9, 12}; 3 and 9 were returned before.
  EpochBuffer::Config config = Plan(/*epochs=*/3, /*per_epoch=*/5, 1, 2, ordered);
  config.resumed = true;
  config.first_epoch = 1;
  config.first_deal = {3, 4, 9, 12};
  config.first_consumed = {true, false, true, false};
  return config;
}

TEST(EpochBufferResumeTest, FirstEpochIsTheDealMinusWhatWasConsumed) {
  EpochBuffer buffer(Resumed(/*ordered=*/true));
  EXPECT_EQ(buffer.current_epoch(), 1u);
  EXPECT_EQ(buffer.remaining_in_epoch(), 2u);
  EXPECT_EQ(buffer.expected_total(), 2u + 5u);
  EXPECT_EQ(buffer.Add(1, PlanBatch(0, 1)), Result::kDuplicate);  // before the resume
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 3)), Result::kDuplicate);  // returned before
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 5)), Result::kInvalid);    // not in the deal
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 12)), Result::kAccepted);  // a pad batch
  EXPECT_FALSE(buffer.has_ready());
  EpochBuffer::Progress progress = buffer.progress();
  EXPECT_EQ(progress.epoch, 1u);
  EXPECT_EQ(progress.prefix, 1u);
  EXPECT_THAT(progress.other, ElementsAre(9));
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 4)), Result::kAccepted);
  ASSERT_TRUE(buffer.Pop().has_value());
  progress = buffer.progress();
  EXPECT_EQ(progress.prefix, 3u);
  EXPECT_THAT(progress.other, IsEmpty());
  EXPECT_THAT(PopAll(buffer), ElementsAre(12));
  // Epoch 2 follows the normal plan.
  EXPECT_EQ(buffer.current_epoch(), 2u);
  EXPECT_EQ(buffer.Add(1, PlanBatch(2, 3)), Result::kAccepted);
  EXPECT_EQ(buffer.progress().prefix, 0u);
}

TEST(EpochBufferResumeTest, UnorderedProgressListsWhatWasReturned) {
  EpochBuffer buffer(Resumed(/*ordered=*/false));
  EXPECT_EQ(buffer.Add(1, PlanBatch(1, 12)), Result::kAccepted);
  EXPECT_THAT(PopAll(buffer), ElementsAre(12));
  EpochBuffer::Progress progress = buffer.progress();
  EXPECT_EQ(progress.prefix, 1u);
  EXPECT_THAT(progress.other, ElementsAre(9, 12));
}

TEST(EpochBufferResumeTest, ResumedAfterTheLastEpochIsDone) {
  EpochBuffer::Config config = Plan(2, 5, 0, 1, false);
  config.resumed = true;
  config.first_epoch = 2;
  EpochBuffer buffer(config);
  EXPECT_TRUE(buffer.done());
  EXPECT_EQ(buffer.expected_total(), 0u);
  EXPECT_EQ(buffer.progress().epoch, 2u);
}

}  // namespace
}  // namespace stoker
