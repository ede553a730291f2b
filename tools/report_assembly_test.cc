#include "tools/report_assembly.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/status_matchers_for_test.h"
#include "trace/bottleneck_report.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

constexpr uint64_t kJobId = (uint64_t{0xabcd} << 32) | 3;

trace::Span MakeSpan(trace::Stage stage, uint64_t batch, int64_t start_ns, int64_t end_ns) {
  trace::Span span;
  span.stage = stage;
  span.thread_id = 1;
  span.task = trace::TaskKey{kJobId, 0, batch};
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  return span;
}

// Rank 0 waits 2 ms of every 3 for batches whose time went to the worker's ops.
std::vector<trace::TraceProcess> WorkerBoundTimeline() {
  using trace::Stage;
  trace::TraceProcess worker{"worker a:1", {}, {}, {}, 0};
  trace::TraceProcess rank{"rank 0", {}, {}, {}, 0};
  for (uint64_t batch = 0; batch < 4; ++batch) {
    const int64_t t = static_cast<int64_t>(batch) * 3'000'000;
    worker.spans.push_back(MakeSpan(Stage::kOpGroup, batch, t - 2'500'000, t - 100'000));
    rank.spans.push_back(MakeSpan(Stage::kHandoff, batch, t, t + 10'000));
    rank.spans.push_back(MakeSpan(Stage::kConsumerStep, batch, t + 10'000, t + 1'000'000));
  }
  return {worker, rank};
}

stoker::v1::GetStatusResponse StatusWithOneRank() {
  stoker::v1::GetStatusResponse status;
  stoker::v1::JobStatus* job = status.add_jobs();
  job->set_job_id(kJobId);
  job->set_name("blur");
  job->mutable_advice()->set_workers_now(2);
  job->mutable_advice()->set_workers_desired(6);
  stoker::v1::RankStatus* rank = job->add_ranks();
  rank->set_rank(0);
  rank->mutable_stats()->set_data_wait_fraction(0.5);
  rank->mutable_stats()->set_received_wire_bytes_per_second(50e6);
  rank->mutable_stats()->set_receive_busy_fraction(0.25);
  for (double busy : {0.9, 0.7}) {
    stoker::v1::WorkerStatus* worker = status.add_workers();
    worker->set_busy_fraction(busy);
    stoker::v1::JobRate* rate = worker->add_job_rates();
    rate->set_job_id(kJobId);
    rate->set_samples_per_second(100);
  }
  stoker::v1::WorkerStatus* idle = status.add_workers();  // another job's: not counted
  idle->set_busy_fraction(0.0);
  idle->add_job_rates()->set_job_id(kJobId + 1);
  return status;
}

TEST(FindJobTest, ByNameFullIdOrSerial) {
  const stoker::v1::GetStatusResponse status = StatusWithOneRank();
  for (const char* name : {"blur", "3", "188896956645379"}) {
    absl::StatusOr<const stoker::v1::JobStatus*> job = FindJob(status, name);
    ASSERT_TRUE(job.ok()) << name << ": " << job.status();
    EXPECT_EQ((*job)->job_id(), kJobId);
  }
  EXPECT_THAT(FindJob(status, "other"), StatusIs(absl::StatusCode::kNotFound, HasSubstr("job: ")));
}

TEST(MetricsFootprintTest, WorkersLinkAndReceivePathFromTheStatus) {
  const stoker::v1::GetStatusResponse status = StatusWithOneRank();
  ReportOptions options;
  options.link_bytes_per_second = 100e6;
  const trace::RankFootprint footprint = MetricsFootprint(status, status.jobs(0), 0, options);
  EXPECT_NEAR(footprint.worker_cpu_utilization, 0.8, 1e-9);  // the job's two workers only
  EXPECT_NEAR(footprint.link_utilization, 0.5, 1e-9);
  EXPECT_NEAR(footprint.trainer_receive_share, 0.25, 1e-9);
  EXPECT_EQ(footprint.workers, 2u);
  EXPECT_EQ(footprint.advisor_workers, 6u);
}

TEST(MetricsFootprintTest, GpuUtilizationWhenTheRankReportsIt) {
  stoker::v1::GetStatusResponse status = StatusWithOneRank();
  EXPECT_EQ(MetricsFootprint(status, status.jobs(0), 0, ReportOptions()).gpu_utilization,
            std::nullopt);  // unset: unknown, not 0
  status.mutable_jobs(0)->mutable_ranks(0)->mutable_stats()->set_gpu_utilization(0.0);
  EXPECT_EQ(MetricsFootprint(status, status.jobs(0), 0, ReportOptions()).gpu_utilization, 0.0);
  status.mutable_jobs(0)->mutable_ranks(0)->mutable_stats()->set_gpu_utilization(0.62);
  EXPECT_EQ(MetricsFootprint(status, status.jobs(0), 0, ReportOptions()).gpu_utilization, 0.62);
}

TEST(MetricsFootprintTest, UnknownLinkCapacityIsNegative) {
  const stoker::v1::GetStatusResponse status = StatusWithOneRank();
  EXPECT_LT(MetricsFootprint(status, status.jobs(0), 0, ReportOptions()).link_utilization, 0);
}

TEST(AssembleReportTest, SpansAndMetricsMakeTheVerdict) {
  const stoker::v1::GetStatusResponse status = StatusWithOneRank();
  absl::StatusOr<std::vector<trace::RankVerdict>> report =
      AssembleReport(status, status.jobs(0), WorkerBoundTimeline(), ReportOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->size(), 1u);
  const trace::RankVerdict& rank = (*report)[0];
  EXPECT_EQ(rank.verdict, trace::Verdict::kWorkers);
  EXPECT_GT(rank.footprint.data_wait_share, 0.5);  // from the spans, not the reported 0.5
  EXPECT_THAT(rank.recommendation, HasSubstr("add 4 worker(s)"));
}

TEST(AssembleReportTest, AFullLinkIsTheNetwork) {
  const stoker::v1::GetStatusResponse status = StatusWithOneRank();
  ReportOptions options;
  options.link_bytes_per_second = 55e6;  // 50 MB/s received: 91%
  absl::StatusOr<std::vector<trace::RankVerdict>> report =
      AssembleReport(status, status.jobs(0), WorkerBoundTimeline(), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(*report, ElementsAre(Field(&trace::RankVerdict::verdict, trace::Verdict::kNetwork)));
}

TEST(AssembleReportTest, ARankWithoutTracedBatchesKeepsItsReportedWait) {
  const stoker::v1::GetStatusResponse status = StatusWithOneRank();
  std::vector<trace::TraceProcess> timeline = WorkerBoundTimeline();
  timeline[1].name = "rank 1";  // traced: rank 1; reported: rank 0
  absl::StatusOr<std::vector<trace::RankVerdict>> report =
      AssembleReport(status, status.jobs(0), timeline, ReportOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->size(), 2u);
  EXPECT_EQ((*report)[0].footprint.rank, 0u);
  EXPECT_NEAR((*report)[0].footprint.data_wait_share, 0.5, 1e-9);
  EXPECT_EQ((*report)[0].verdict, trace::Verdict::kNone);
  EXPECT_THAT((*report)[0].recommendation, HasSubstr("no late batch was traced"));
  EXPECT_EQ((*report)[1].verdict, trace::Verdict::kWorkers);
}

TEST(AssembleReportTest, NoRankIsAnError) {
  stoker::v1::GetStatusResponse status = StatusWithOneRank();
  status.mutable_jobs(0)->clear_ranks();
  EXPECT_THAT(AssembleReport(status, status.jobs(0), {}, ReportOptions()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no rank")));
}

TEST(AssembleReportTest, PeersFractionsAreClampedIntoRange) {
  stoker::v1::GetStatusResponse status = StatusWithOneRank();
  status.mutable_workers(0)->set_busy_fraction(7);
  status.mutable_jobs(0)->mutable_ranks(0)->mutable_stats()->set_receive_busy_fraction(-3);
  status.mutable_jobs(0)->mutable_ranks(0)->mutable_stats()->set_gpu_utilization(4);
  absl::StatusOr<std::vector<trace::RankVerdict>> report =
      AssembleReport(status, status.jobs(0), WorkerBoundTimeline(), ReportOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_NEAR((*report)[0].footprint.worker_cpu_utilization, 0.85, 1e-9);  // (1 + 0.7) / 2
  EXPECT_EQ((*report)[0].footprint.trainer_receive_share, 0);
  EXPECT_EQ((*report)[0].footprint.gpu_utilization, 1.0);
}

}  // namespace
}  // namespace stoker
