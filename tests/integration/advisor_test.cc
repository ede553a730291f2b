// The advisor end to end (issue: knowing how many workers a job needs): a consumer with a fixed
// step, fed first by too few workers and then by too many, and the coordinator's advice checked
// against the ideal computed from rates the test measures itself.

#include <cmath>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"
#include "worker/batch_producer.h"
#include "worker/job_context.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

constexpr uint32_t kBatch = 16;

// Heavy enough that one worker thread cannot feed a consumer with a 1 ms step.
pb::JobSpec BlurJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(1'000'000);
  synthetic->set_height(64);
  synthetic->set_width(64);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  for (int i = 0; i < 20; ++i) {
    pb::GaussianBlurOp* blur = spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur();
    blur->set_ksize(11);
    blur->set_sigma(1.5);
  }
  spec.set_batch_size(kBatch);
  spec.set_seed(7);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  return spec;
}

// Samples per CPU-second one producer thread makes of `spec`: the test's own measure of a
// worker's capacity.
double MeasureCapacity(const pb::JobSpec& spec) {
  auto job = JobContext::Create(1, spec);
  EXPECT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  pb::BatchMessage message;
  pb::TaskId task;
  task.set_job_id(1);
  uint64_t samples = 0;
  const absl::Duration start = ThreadCpuTime();
  while (ThreadCpuTime() - start < absl::Milliseconds(500)) {
    task.set_batch_index(samples / kBatch);
    EXPECT_TRUE(ProduceBatch(**job, task, 1, &scratch, &message).ok());
    samples += kBatch;
  }
  return samples / absl::ToDoubleSeconds(ThreadCpuTime() - start);
}

// Consumes with a fixed step until the coordinator has measured advice over a few seconds.
pb::JobStatus ConsumeUntilAdvised(TestCluster& cluster, const std::string& job_name,
                                  absl::Duration step) {
  LoaderOptions options;
  options.coordinator_address = cluster.coordinator_address();
  options.job_name = job_name;
  options.spec = BlurJob();
  options.heartbeat_interval = absl::Milliseconds(100);
  auto loader = Loader::Open(options);
  EXPECT_TRUE(loader.ok()) << loader.status();
  if (!loader.ok()) return pb::JobStatus();
  const absl::Time start = absl::Now();
  const absl::Time give_up = start + absl::Seconds(30);
  pb::JobStatus status;
  while (absl::Now() < give_up) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status();
    if (!batch.ok()) break;
    absl::SleepFor(step);
    if (absl::Now() - start < absl::Seconds(3)) continue;  // Let the windows fill.
    status = cluster.coordinator()->coordinator()->GetStatus().jobs(0);
    if (status.advice().measured()) break;
  }
  (*loader)->Stop();
  return status;
}

// The advice for `workers` workers feeding a consumer with a fixed `step`, and what it should
// be: ⌈demand × headroom / capacity⌉ with demand from the rank's measured step and capacity from
// the test's own measure (within 25%).
struct Scenario {
  pb::JobAdvice advice;
  double expected_workers = 0;
};

Scenario RunScenario(int workers, absl::Duration step, const std::string& job_name) {
  const double capacity = MeasureCapacity(BlurJob());
  auto cluster = TestCluster::Start(workers);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return Scenario();
  const pb::JobStatus status = ConsumeUntilAdvised(**cluster, job_name, step);
  EXPECT_TRUE(status.advice().measured()) << status.advice().explanation();
  if (status.ranks_size() == 0) return Scenario();
  const double demand = kBatch / status.ranks(0).stats().step_seconds();
  Scenario scenario{status.advice(), std::max(1.0, std::ceil(demand * 1.1 / capacity))};
  ::testing::Test::RecordProperty("advice", scenario.advice.explanation());
  ::testing::Test::RecordProperty("expected_workers", std::to_string(scenario.expected_workers));
  return scenario;
}

TEST(AdvisorIntegrationTest, TooFewWorkersAsksForMore) {
  const Scenario s = RunScenario(/*workers=*/1, absl::Milliseconds(1), "too-few");
  EXPECT_GT(s.advice.workers_desired(), 1u) << s.advice.explanation();
  EXPECT_THAT(s.advice.explanation(), HasSubstr(": add "));
  EXPECT_NEAR(s.advice.workers_desired(), s.expected_workers, 0.25 * s.expected_workers)
      << s.advice.explanation();
}

TEST(AdvisorIntegrationTest, IdleWorkersAskForFewer) {
  const Scenario s = RunScenario(/*workers=*/3, absl::Milliseconds(20), "too-many");
  EXPECT_LT(s.advice.workers_desired(), 3u) << s.advice.explanation();
  EXPECT_THAT(s.advice.explanation(), HasSubstr("remove"));
  EXPECT_NEAR(s.advice.workers_desired(), s.expected_workers, 0.25 * s.expected_workers)
      << s.advice.explanation();
}

}  // namespace
}  // namespace stoker
