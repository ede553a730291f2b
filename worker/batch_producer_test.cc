#include "worker/batch_producer.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "worker/simulated_batch.h"
#include "worker/small_blur_job_for_test.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

using worker_testing::TaskOf;

namespace pb = ::stoker::v1;

TEST(ProduceBatchTest, FollowsThePlanAndIsDeterministic) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(2, 2), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch_a, scratch_b;
  pb::BatchMessage a, b;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 1, 3), 9, &scratch_a, &a).ok());
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 1, 3), 9, &scratch_b, &b).ok());
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(a.data().size(), 4u * 3 * 16 * 12 * sizeof(float));
  EXPECT_EQ(std::vector<int64_t>(a.header().shape().begin(), a.header().shape().end()),
            (std::vector<int64_t>{4, 3, 16, 12}));
  EXPECT_EQ(a.header().dtype(), pb::DTYPE_FLOAT32);
  EXPECT_EQ(a.header().layout(), pb::LAYOUT_CHW);
  EXPECT_EQ(a.header().worker_id(), 9u);

  auto plan = (*job)->Plan(1);
  ASSERT_TRUE(plan.ok());
  std::vector<uint64_t> expected(4);
  ASSERT_TRUE((*plan)->BatchSamples(3, absl::MakeSpan(expected)).ok());
  ASSERT_EQ(a.header().sample_indices_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.header().sample_indices(i), expected[i]);
    EXPECT_EQ(a.header().labels(i), static_cast<int64_t>(expected[i] % 7));
  }

  // Reusing a message for another task overwrites it completely.
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 3), 9, &scratch_a, &a).ok());
  EXPECT_NE(a.data(), b.data());
}

TEST(ProduceBatchTest, TaskPastThePlanIsOutOfRange) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(2, 2), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok());
  ProducerScratch scratch;
  pb::BatchMessage out;
  // 40 samples / 4 = 10 batches, 5 per rank; a resumed epoch may add pad batches up to
  // BatchIndexLimit(10, 2) = 24, so 24 does not exist.
  EXPECT_EQ(ProduceBatch(**job, TaskOf(1, 0, 24), 1, &scratch, &out).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ProduceBatch(**job, TaskOf(1, 2, 0), 1, &scratch, &out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BatchProducerTest, ProducesOnThreadsAndCountsBatches) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(2, 2), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok());
  MessagePool pool(4);
  BatchProducer producer(2, 5, &pool, Clock::Real());
  absl::Mutex mu;
  int done = 0;
  absl::Notification all_done;
  for (uint64_t g = 0; g < 10; ++g) {
    producer.Submit(*job, TaskOf(1, 0, g),
                    [&](absl::Status status, std::unique_ptr<pb::BatchMessage> batch) {
                      EXPECT_TRUE(status.ok()) << status;
                      EXPECT_EQ(batch->header().worker_id(), 5u);
                      pool.Put(std::move(batch));
                      absl::MutexLock lock(&mu);
                      if (++done == 10) all_done.Notify();
                    });
  }
  all_done.WaitForNotification();
  EXPECT_EQ(producer.batches_produced(), 10u);
  EXPECT_EQ(producer.samples_produced(), 40u);
  producer.Stop();
  bool cancelled = false;
  producer.Submit(*job, TaskOf(1, 0, 0),
                  [&](absl::Status status, std::unique_ptr<pb::BatchMessage>) {
                    cancelled = status.code() == absl::StatusCode::kCancelled;
                  });
  EXPECT_TRUE(cancelled);
}

// Runs `batches` simulated batches (ready at once: production costs next to nothing) of 4
// samples on one producer thread timed by `clock`; `hand_off` runs as each batch is handed on.
// Returns the recent figures `idle` after the last hand-off was recorded.
pb::WorkerStats ProduceSimulated(FakeClock* clock, int batches,
                                 const std::function<void()>& hand_off,
                                 absl::Duration idle = absl::ZeroDuration()) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(2, 2), DatasetIo::FromEnvironment());
  EXPECT_TRUE(job.ok()) << job.status();
  MessagePool pool(4);
  BatchProducer producer(1, 5, &pool, clock);
  producer.set_simulation(
      SimulatedProduction{absl::ZeroDuration(), SimulatedBatchMode::kSleep, absl::ZeroDuration()});
  absl::Notification all_done;
  for (int g = 0; g < batches; ++g) {
    producer.Submit(*job, TaskOf(1, 0, static_cast<uint64_t>(g)),
                    [&, g](absl::Status status, std::unique_ptr<pb::BatchMessage> batch) {
                      EXPECT_TRUE(status.ok()) << status;
                      hand_off();
                      pool.Put(std::move(batch));
                      if (g + 1 == batches) all_done.Notify();
                    });
  }
  all_done.WaitForNotification();
  producer.Stop();  // the last task's time is recorded once its `done` has returned
  clock->Advance(idle);
  pb::WorkerStats stats;
  producer.ReportRecent(&stats);
  return stats;
}

// Handing a batch on (`done`: encoding and sending it, on the producer thread) is part of what
// the task cost: the busy fraction counts it. Each hand-off here burns 30 ms of the thread's CPU
// and takes 60 ms of the injected clock, so at least 90 ms of CPU were busy in a span of 180 ms.
// Counting production alone (as before) reported a fraction of the microseconds SimulateBatch
// takes.
TEST(BatchProducerTest, BusyAndOccupiedCountTheHandOff) {
  FakeClock clock;
  const pb::WorkerStats stats = ProduceSimulated(&clock, 3, [&clock] {
    std::string scratch;
    BurnThreadCpu(absl::Milliseconds(30), ThreadCpuTime(), &scratch);
    clock.Advance(absl::Milliseconds(60));
  });
  EXPECT_GE(stats.busy_fraction(), 0.5);
  EXPECT_DOUBLE_EQ(stats.occupied_fraction(), 1.0);  // the thread held a task all along
  EXPECT_EQ(stats.process_cpu_fraction(), 0);        // a shared process: not reported
}

// The recent figures are measured on the injected clock: three hand-offs of 30 ms each, then
// 90 ms idle, make an occupied fraction of exactly a half and 12 samples in 180 ms.
TEST(BatchProducerTest, RecentFiguresFollowTheInjectedClock) {
  FakeClock clock;
  const pb::WorkerStats stats = ProduceSimulated(
      &clock, 3, [&clock] { clock.Advance(absl::Milliseconds(30)); }, absl::Milliseconds(90));
  EXPECT_DOUBLE_EQ(stats.occupied_fraction(), 0.5);
  EXPECT_LT(stats.busy_fraction(), stats.occupied_fraction());  // the thread's CPU barely moved
  ASSERT_EQ(stats.job_rates_size(), 1);
  EXPECT_EQ(stats.job_rates(0).job_id(), 1u);
  EXPECT_DOUBLE_EQ(stats.job_rates(0).samples_per_second(), 12 / 0.18);
}

}  // namespace
}  // namespace stoker
