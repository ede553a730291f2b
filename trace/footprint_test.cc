#include "trace/footprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/status_matchers_for_test.h"
#include "trace/span_for_test.h"

namespace stoker::trace {
namespace {

using ::testing::HasSubstr;

double Late(const RankFootprint& footprint, Stage stage) {
  return footprint.late_stage_seconds[StageIndex(stage)];
}

// Three batches; the consumer waits 500 ns for the third, whose op group was long.
std::vector<TraceProcess> ThirdBatchLateOnTheWorker() {
  TraceProcess coordinator{"coordinator", {BatchSpan(Stage::kLeaseGranted, 2, 50, 50)}, {}, {}, 0};
  TraceProcess worker{
      "worker a:1",
      {BatchSpan(Stage::kDecode, 1, 0, 300), BatchSpan(Stage::kDecode, 2, 100, 400),
       BatchSpan(Stage::kOpGroup, 2, 400, 2000), BatchSpan(Stage::kSend, 2, 2000, 2400)},
      {},
      {},
      0};
  TraceProcess rank{
      "rank 0",
      {BatchSpan(Stage::kHandoff, 0, 0, 10), BatchSpan(Stage::kConsumerStep, 0, 10, 1010),
       BatchSpan(Stage::kHandoff, 1, 1010, 1020), BatchSpan(Stage::kConsumerStep, 1, 1020, 2020),
       BatchSpan(Stage::kReceive, 2, 2400, 2500), BatchSpan(Stage::kHandoff, 2, 2520, 2530),
       BatchSpan(Stage::kConsumerStep, 2, 2530, 3530)},
      {},
      {},
      0};
  return {coordinator, worker, rank};
}

TEST(FootprintFromTimelineTest, WaitsStepsAndTheLateBatchsStages) {
  FootprintOptions options;
  options.late_wait_ns = 100;
  const absl::StatusOr<RankFootprint> footprint =
      FootprintFromTimeline(ThirdBatchLateOnTheWorker(), "rank 0", 0, options);
  ASSERT_TRUE(footprint.ok()) << footprint.status();
  EXPECT_DOUBLE_EQ(footprint->data_wait_share, 500.0 / 3530);
  EXPECT_DOUBLE_EQ(footprint->gpu_step_share, 3000.0 / 3530);
  // Only batch 2's spans: batch 1's decode is not late.
  EXPECT_DOUBLE_EQ(Late(*footprint, Stage::kDecode), 300e-9);
  EXPECT_DOUBLE_EQ(Late(*footprint, Stage::kOpGroup), 1600e-9);
  EXPECT_DOUBLE_EQ(Late(*footprint, Stage::kSend), 400e-9);
  EXPECT_DOUBLE_EQ(Late(*footprint, Stage::kReceive), 100e-9);
  EXPECT_DOUBLE_EQ(Late(*footprint, Stage::kLeaseGranted), 0);
  // Decode and the op group dominate the late batch's path: the verdict names the workers.
  EXPECT_EQ(Diagnose(*footprint)->verdict, Verdict::kWorkers);
}

TEST(FootprintFromTimelineTest, ShortWaitsAreNotLate) {
  FootprintOptions options;
  options.late_wait_ns = 501;
  const absl::StatusOr<RankFootprint> footprint =
      FootprintFromTimeline(ThirdBatchLateOnTheWorker(), "rank 0", 0, options);
  ASSERT_TRUE(footprint.ok()) << footprint.status();
  EXPECT_DOUBLE_EQ(footprint->data_wait_share, 500.0 / 3530);
  EXPECT_DOUBLE_EQ(Late(*footprint, Stage::kOpGroup), 0);
}

TEST(FootprintFromTimelineTest, NeedsTheRanksProcessAndAHandoff) {
  EXPECT_THAT(FootprintFromTimeline(ThirdBatchLateOnTheWorker(), "rank 9", 9),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("rank_process: no process named")));
  EXPECT_THAT(FootprintFromTimeline(ThirdBatchLateOnTheWorker(), "worker a:1", 0),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("has no handoff span")));
}

}  // namespace
}  // namespace stoker::trace
