#include "trainer_client/consumer_side.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/testing/epoch_buffer_plans.h"

namespace stoker {
namespace {

using ::stoker::testing::kPlanJob;
using ::stoker::testing::PlanBatch;
using ::testing::ElementsAre;
using Result = EpochBuffer::AddResult;

constexpr absl::Time kStart = absl::FromUnixSeconds(1'000);

// Rank 0 of 1, two epochs of two batches (of 2 samples, 6 bytes).
class ConsumerSideTest : public ::testing::Test {
 protected:
  ConsumerSideTest() : consumer_(Options(), Job(), kStart) {}

  static LoaderOptions Options() {
    LoaderOptions options;
    options.spec.set_world_size(1);
    options.spec.set_epochs(2);
    options.spec.set_batch_size(2);
    return options;
  }
  static v1::OpenJobResponse Job() {
    v1::OpenJobResponse job;
    job.set_job_id(kPlanJob);
    job.set_batches_per_epoch_per_rank(2);
    return job;
  }
  Result Add(uint32_t epoch, uint64_t index, uint64_t job = kPlanJob) {
    return consumer_
        .Add(/*source=*/3, PlanBatch(epoch, index, job), /*wire_bytes=*/6, kStart, kStart)
        .result;
  }
  static std::vector<uint64_t> Indices(const std::vector<v1::TaskId>& tasks) {
    std::vector<uint64_t> indices;
    for (const v1::TaskId& task : tasks) indices.push_back(task.batch_index());
    return indices;
  }

  ConsumerSide consumer_;
};

TEST_F(ConsumerSideTest, CountsAcceptedDuplicateAndInvalidBatches) {
  EXPECT_EQ(Add(0, 1), Result::kAccepted);
  EXPECT_EQ(Add(0, 1), Result::kDuplicate);
  EXPECT_EQ(Add(0, 0, /*job=*/8), Result::kInvalid);
  const LoaderStats& stats = consumer_.stats();
  EXPECT_EQ(stats.batches_received, 1u);
  EXPECT_EQ(stats.samples_received, 2u);
  EXPECT_EQ(stats.bytes_received, 6u);
  EXPECT_EQ(stats.duplicates_dropped, 1u);
  EXPECT_EQ(stats.invalid_dropped, 1u);
}

TEST_F(ConsumerSideTest, ReportsEachReceivedTaskOnceAndAgainAfterAFailedHeartbeat) {
  Add(0, 1);
  std::vector<v1::TaskId> reported = consumer_.TakeReceivedReport();
  EXPECT_THAT(Indices(reported), ElementsAre(1));
  EXPECT_FALSE(consumer_.has_received_report());
  Add(0, 0);  // arrives while the heartbeat is out
  consumer_.RestoreReceivedReport(std::move(reported));
  EXPECT_THAT(Indices(consumer_.TakeReceivedReport()), ElementsAre(1, 0));
}

TEST_F(ConsumerSideTest, PopsDeliverBatchesAndEndTheEpoch) {
  Add(0, 1);
  Add(0, 0);
  StreamId source = 0;
  ASSERT_TRUE(consumer_.Pop(&source).has_value());
  EXPECT_EQ(source, 3u);
  EXPECT_FALSE(consumer_.EpochOver(0));
  ASSERT_TRUE(consumer_.Pop(&source).has_value());
  EXPECT_EQ(consumer_.stats().batches_delivered, 2u);
  EXPECT_TRUE(consumer_.EpochOver(0));
  EXPECT_FALSE(consumer_.EpochOver(std::nullopt));
  EXPECT_FALSE(consumer_.CanReturn(std::nullopt));  // epoch 1: nothing yet
  EXPECT_TRUE(consumer_.CanReturn(0));
}

TEST_F(ConsumerSideTest, TheViewShowsAWaitingLoopAndWhatIsBuffered) {
  EXPECT_FALSE(consumer_.view().waiting);
  EXPECT_FALSE(consumer_.view().ready);
  consumer_.BeginWait();
  EXPECT_TRUE(consumer_.view().waiting);
  Add(0, 0);
  EXPECT_TRUE(consumer_.view().ready);
  EXPECT_EQ(consumer_.view().buffered, 1u);
  consumer_.EndWait();
  EXPECT_FALSE(consumer_.view().waiting);
}

TEST_F(ConsumerSideTest, ReportsMissingTasksAsOverdueOnlyWhileTheLoopWaits) {
  Add(0, 0);
  EXPECT_TRUE(consumer_.ReportOverdue(64).empty());
  consumer_.BeginWait();
  const std::vector<v1::TaskId> overdue = consumer_.ReportOverdue(64);
  ASSERT_EQ(overdue.size(), 1u);
  EXPECT_EQ(overdue[0].job_id(), kPlanJob);
  EXPECT_EQ(overdue[0].epoch(), 0u);
  EXPECT_EQ(overdue[0].batch_index(), 1u);
  EXPECT_EQ(consumer_.stats().overdue_reported, 1u);
}

TEST_F(ConsumerSideTest, SumsTheLoopsWaitsAndSteps) {
  consumer_.OnNextEntered(kStart);  // the first call ends no step
  consumer_.OnNextReturned(kStart, kStart + absl::Seconds(2), /*returned_batch=*/true);
  consumer_.OnNextEntered(kStart + absl::Seconds(5));
  EXPECT_DOUBLE_EQ(consumer_.stats().wait_seconds, 2.0);
  EXPECT_DOUBLE_EQ(consumer_.stats().step_seconds, 3.0);
  EXPECT_EQ(consumer_.Snapshot(kStart + absl::Seconds(5), 0.5).gpu_utilization(), 0.5);
}

}  // namespace
}  // namespace stoker
