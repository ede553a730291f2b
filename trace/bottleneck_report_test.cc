#include "trace/bottleneck_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "coordinator/status_matchers_for_test.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace stoker::trace {
namespace {

using ::testing::HasSubstr;

RankFootprint Footprint(double data_wait, const std::map<Stage, double>& late_seconds) {
  RankFootprint footprint;
  footprint.data_wait_share = data_wait;
  footprint.gpu_step_share = 1 - data_wait;
  for (const auto& [stage, seconds] : late_seconds) {
    footprint.late_stage_seconds[StageIndex(stage)] = seconds;
  }
  footprint.worker_cpu_utilization = 0.3;
  footprint.link_utilization = 0.2;
  footprint.trainer_receive_share = 0.1;
  footprint.workers = 2;
  footprint.advisor_workers = 2;
  return footprint;
}

Verdict VerdictFor(const RankFootprint& footprint, const BottleneckThresholds& thresholds = {}) {
  const absl::StatusOr<RankVerdict> verdict = Diagnose(footprint, thresholds);
  EXPECT_TRUE(verdict.ok()) << verdict.status();
  return verdict.ok() ? verdict->verdict : Verdict::kNone;
}

// One footprint per verdict, as the footprint tests provoke them with real processes.
RankFootprint TooFewWorkersForAHeavyBlur() {
  RankFootprint f = Footprint(
      0.45,
      {{Stage::kDecode, 1.0}, {Stage::kOpGroup, 4.0}, {Stage::kSend, 0.3}, {Stage::kReceive, 0.2}});
  f.worker_cpu_utilization = 0.97;
  f.advisor_workers = 5;
  return f;
}
RankFootprint SlowShardServer() {
  return Footprint(0.5, {{Stage::kShardRead, 3.0}, {Stage::kDecode, 0.5}, {Stage::kSend, 0.1}});
}
RankFootprint ShapedLink() {
  // The wire is full even though decode and ops are the longest stages of late batches.
  RankFootprint f = Footprint(0.6, {{Stage::kDecode, 2.0}, {Stage::kSend, 1.0}});
  f.link_utilization = 0.93;
  return f;
}
RankFootprint SlowReceivePath() {
  RankFootprint f = Footprint(0.3, {{Stage::kReceive, 1.0},
                                    {Stage::kDecompress, 0.5},
                                    {Stage::kH2D, 0.8},
                                    {Stage::kDecode, 0.4}});
  f.trainer_receive_share = 0.9;
  return f;
}
RankFootprint ConsumerStepDominates() {
  return Footprint(0.04, {{Stage::kDecode, 2.0}, {Stage::kConsumerStep, 50.0}});
}

TEST(DiagnoseTest, EachFootprintGetsExactlyItsVerdict) {
  EXPECT_EQ(VerdictFor(TooFewWorkersForAHeavyBlur()), Verdict::kWorkers);
  EXPECT_EQ(VerdictFor(SlowShardServer()), Verdict::kStorage);
  EXPECT_EQ(VerdictFor(ShapedLink()), Verdict::kNetwork);
  EXPECT_EQ(VerdictFor(SlowReceivePath()), Verdict::kTrainer);
  EXPECT_EQ(VerdictFor(ConsumerStepDominates()), Verdict::kNone);
}

TEST(DiagnoseTest, RecommendationsFollowTheVerdict) {
  const auto workers = Diagnose(TooFewWorkersForAHeavyBlur());
  ASSERT_TRUE(workers.ok());
  EXPECT_THAT(workers->recommendation,
              HasSubstr("add 3 worker(s) (2 now, the advisor suggests 5)"));
  EXPECT_NEAR(workers->group_shares[static_cast<int>(StageGroup::kWorkers)], 5.0 / 5.5, 1e-12);
  EXPECT_THAT(Diagnose(SlowShardServer())->recommendation, HasSubstr("stoker-pack"));
  EXPECT_THAT(Diagnose(ShapedLink())->recommendation, HasSubstr("uint8 or float16"));
  EXPECT_THAT(Diagnose(SlowReceivePath())->recommendation, HasSubstr("pinned memory"));
  EXPECT_THAT(Diagnose(ConsumerStepDominates())->recommendation,
              HasSubstr("GPU step takes 96.0% of the time"));
  RankFootprint busy_gpu = ConsumerStepDominates();
  busy_gpu.gpu_utilization = 0.85;  // below rule 0's threshold: rule 1's text, with NVML's figure
  EXPECT_THAT(Diagnose(busy_gpu)->recommendation,
              HasSubstr("nothing to change (NVML: the GPU is busy 85.0% of the time)"));
  // The advisor asking for no more workers than there are still says to add one.
  RankFootprint enough = TooFewWorkersForAHeavyBlur();
  enough.advisor_workers = 1;
  EXPECT_THAT(Diagnose(enough)->recommendation, HasSubstr("add 1 worker(s)"));
}

// Asynchronous CUDA work blocks the host in Next()'s device copy while the GPU drains its queue:
// a busy GPU (NVML) overrides a data wait that only looks like starvation (seen on an H200:
// 99.7% busy, verdict "workers" before rule 0).
TEST(DiagnoseTest, ABusyGpuMeansNoneWhateverTheDataWait) {
  RankFootprint f = TooFewWorkersForAHeavyBlur();
  f.gpu_utilization = 0.90;
  const absl::StatusOr<RankVerdict> busy = Diagnose(f);
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->verdict, Verdict::kNone);
  EXPECT_THAT(busy->recommendation, HasSubstr("NVML: the GPU is busy 90.0% of the time"));
  f.gpu_utilization = 0.89;
  EXPECT_EQ(VerdictFor(f), Verdict::kWorkers);
  f.gpu_utilization.reset();
  EXPECT_EQ(VerdictFor(f), Verdict::kWorkers);
  BottleneckThresholds strict;
  strict.gpu_busy = 0.95;
  f.gpu_utilization = 0.93;
  EXPECT_EQ(VerdictFor(f, strict), Verdict::kWorkers);
}

TEST(DiagnoseTest, DataWaitThresholdIsInclusive) {
  RankFootprint f = TooFewWorkersForAHeavyBlur();
  f.data_wait_share = 0.10;
  EXPECT_EQ(VerdictFor(f), Verdict::kWorkers);
  f.data_wait_share = 0.0999;
  EXPECT_EQ(VerdictFor(f), Verdict::kNone);
  BottleneckThresholds lenient;
  lenient.data_wait_share = 0.5;
  f.data_wait_share = 0.45;
  EXPECT_EQ(VerdictFor(f, lenient), Verdict::kNone);
}

TEST(DiagnoseTest, LinkNearCapacityIsInclusiveAndWinsOverTheCriticalPath) {
  RankFootprint f = TooFewWorkersForAHeavyBlur();
  f.link_utilization = 0.80;
  EXPECT_EQ(VerdictFor(f), Verdict::kNetwork);
  f.link_utilization = 0.7999;
  EXPECT_EQ(VerdictFor(f), Verdict::kWorkers);
}

TEST(DiagnoseTest, TiesGoUpstream) {
  EXPECT_EQ(VerdictFor(Footprint(0.5, {{Stage::kShardRead, 1.0}, {Stage::kDecode, 1.0}})),
            Verdict::kStorage);
  EXPECT_EQ(VerdictFor(Footprint(0.5, {{Stage::kTail, 1.0}, {Stage::kQueue, 1.0}})),
            Verdict::kWorkers);
  EXPECT_EQ(VerdictFor(Footprint(0.5, {{Stage::kSend, 1.0}, {Stage::kHandoff, 1.0}})),
            Verdict::kNetwork);
}

TEST(DiagnoseTest, WireTimeWithABusyReceiverBelowCapacityIsTheTrainer) {
  RankFootprint f = Footprint(0.5, {{Stage::kSend, 2.0}, {Stage::kReceive, 0.5}});
  f.link_utilization = 0.4;
  f.trainer_receive_share = 0.80;
  EXPECT_EQ(VerdictFor(f), Verdict::kTrainer);
  f.trainer_receive_share = 0.79;
  EXPECT_EQ(VerdictFor(f), Verdict::kNetwork);
  // With the link's capacity unknown, a full receiver does not clear the link.
  f.trainer_receive_share = 0.95;
  f.link_utilization = -1;
  EXPECT_EQ(VerdictFor(f), Verdict::kNetwork);
}

TEST(DiagnoseTest, StagesOutsideTheDataPathDoNotCount) {
  EXPECT_EQ(VerdictFor(Footprint(0.5, {{Stage::kLeaseWait, 10.0},
                                       {Stage::kBufferWait, 10.0},
                                       {Stage::kConsumerStep, 10.0},
                                       {Stage::kDecode, 0.1}})),
            Verdict::kWorkers);
}

TEST(DiagnoseTest, WaitingWithNoLateBatchTracedIsNoneAndSaysSo) {
  const auto verdict = Diagnose(Footprint(0.5, {}));
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->verdict, Verdict::kNone);
  EXPECT_THAT(verdict->recommendation, HasSubstr("no late batch was traced"));
}

TEST(DiagnoseTest, BadFiguresAreRefusedNamingTheField) {
  RankFootprint f = SlowShardServer();
  f.data_wait_share = 1.5;
  EXPECT_THAT(Diagnose(f), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("data_wait_share: 1.5 is not in [0, 1]")));
  f = SlowShardServer();
  f.trainer_receive_share = -0.1;
  EXPECT_THAT(Diagnose(f),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trainer_receive_share:")));
  f = SlowShardServer();
  f.link_utilization = std::nan("");
  EXPECT_THAT(Diagnose(f),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("link_utilization:")));
  f = SlowShardServer();
  f.gpu_utilization = 1.2;
  EXPECT_THAT(Diagnose(f), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("gpu_utilization: 1.2 is not in [0, 1]")));
  f = SlowShardServer();
  f.late_stage_seconds[StageIndex(Stage::kDecode)] = -1;
  EXPECT_THAT(Diagnose(f), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("late_stage_seconds[decode]: -1")));
}

std::vector<RankVerdict> AllFiveRanks() {
  std::vector<RankVerdict> ranks;
  uint32_t rank = 0;
  for (RankFootprint f : {TooFewWorkersForAHeavyBlur(), SlowShardServer(), ShapedLink(),
                          SlowReceivePath(), ConsumerStepDominates()}) {
    f.rank = rank++;
    ranks.push_back(*Diagnose(f));
  }
  return ranks;
}

TEST(RenderReportTest, JsonHasAVerdictPerRank) {
  const std::string json = RenderReportJson(AllFiveRanks());
  google::protobuf::Struct document;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &document).ok()) << json;
  const auto& ranks = document.fields().at("ranks").list_value().values();
  ASSERT_EQ(ranks.size(), 5);
  const char* expected[] = {"workers", "storage", "network", "trainer", "none"};
  for (int i = 0; i < 5; ++i) {
    const auto& fields = ranks[i].struct_value().fields();
    EXPECT_EQ(fields.at("rank").number_value(), i);
    EXPECT_EQ(fields.at("verdict").string_value(), expected[i]);
  }
  const auto& first = ranks[0].struct_value().fields();
  EXPECT_EQ(first.at("late_stage_seconds").struct_value().fields().at("op_group").number_value(),
            4.0);
  EXPECT_EQ(first.at("link_utilization").number_value(), 0.2);
  EXPECT_EQ(first.at("advisor_workers").number_value(), 5);
  EXPECT_EQ(first.at("gpu_utilization").kind_case(), google::protobuf::Value::kNullValue);
}

TEST(RenderReportTest, KnownGpuUtilizationIsShown) {
  RankFootprint f = ConsumerStepDominates();
  f.gpu_utilization = 0.875;
  const RankVerdict verdict = *Diagnose(f);
  EXPECT_THAT(RenderReportText({verdict}),
              HasSubstr("  data wait 4.0%, GPU step 96.0%, GPU utilization 87.5%\n"));
  google::protobuf::Struct document;
  const std::string json = RenderReportJson({verdict});
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &document).ok()) << json;
  const auto& fields = document.fields().at("ranks").list_value().values(0).struct_value().fields();
  EXPECT_EQ(fields.at("gpu_utilization").number_value(), 0.875);
}

TEST(RenderReportTest, TextNamesVerdictFootprintAndRecommendation) {
  RankFootprint f = SlowShardServer();
  f.rank = 3;
  f.link_utilization = -1;
  const std::string text = RenderReportText({*Diagnose(f)});
  EXPECT_EQ(text,
            "rank 3: storage\n"
            "  data wait 50.0%, GPU step 50.0%, GPU utilization unknown\n"
            "  late batches' critical path: storage 83.3%, workers 13.9%, network 2.8%, "
            "trainer 0.0%\n"
            "  workers' CPU 30.0%, link capacity unknown, trainer receive/H2D busy 10.0%\n"
            "  recommendation: reads make batches late: enable the workers' cache, pack small "
            "files into shards (stoker-pack), shuffle shard-aware (shuffle_window_shards)\n");
}

}  // namespace
}  // namespace stoker::trace
