#include "tools/bench_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

BenchRun SampleRun() {
  BenchRun run;
  run.job_name = "bench-1";
  run.job_id = 3;
  run.batches = 10;
  run.images = 640;
  run.wall_seconds = 2.0;
  run.step = absl::Milliseconds(5);
  run.steady_images = 192;
  run.steady_cpu_seconds = 0.125;
  run.stats.wait_seconds = 0.5;
  run.stats.step_seconds = 0.06;
  run.stats.duplicates_dropped = 1;
  WorkerReceiveStats worker;
  worker.worker_id = 4;
  worker.address = "127.0.0.1:9000";
  worker.batches = 10;
  worker.samples = 640;
  worker.bytes = 9000;
  worker.wire_bytes = 4000;
  run.stats.workers.push_back(worker);
  run.stats.corrupt_payloads = 2;
  return run;
}

TEST(BenchReportTest, HumanReportHasTheFigures) {
  const std::string report = FormatBenchReport(SampleRun());
  EXPECT_THAT(report, HasSubstr("320.0 images/s, 5.00 batches/s"));
  EXPECT_THAT(report, HasSubstr("data wait   25.0% of wall time"));
  EXPECT_THAT(report, HasSubstr("mean step   6.00 ms"));
  EXPECT_THAT(report, HasSubstr("1 dropped"));
  EXPECT_THAT(report, HasSubstr("worker 4 (127.0.0.1:9000): 10 batches, 320.0 images/s"));
}

TEST(BenchReportTest, JsonReportHasTheFigures) {
  const std::string json = FormatBenchReportJson(SampleRun());
  EXPECT_THAT(json, HasSubstr("\"job\":\"bench-1\""));
  EXPECT_THAT(json, HasSubstr("\"images_per_second\":320.000"));
  EXPECT_THAT(json, HasSubstr("\"data_wait_fraction\":0.250000"));
  EXPECT_THAT(json, HasSubstr("\"workers\":[{\"worker_id\":4,\"address\":\"127.0.0.1:9000\""));
  EXPECT_THAT(json, HasSubstr("\"corrupt_payloads\":2,"));
  EXPECT_THAT(json, HasSubstr("\"steady_images\":192,\"steady_cpu_seconds\":0.125000,"));
  EXPECT_THAT(json, HasSubstr("\"bytes\":9000,\"wire_bytes\":4000}"));
}

TEST(BenchReportTest, IndicesLineNamesEpochRankBatchAndSamples) {
  Batch batch(testing::MakeBatchMessage(/*job=*/1, /*epoch=*/2, /*batch_index=*/5));
  EXPECT_EQ(FormatIndicesLine(batch, /*rank=*/1),
            "{\"epoch\":2,\"rank\":1,\"batch\":5,\"samples\":[10,11]}");
}

}  // namespace
}  // namespace stoker
