#include "worker/simulated_batch.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/batch_producer.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

using worker_testing::TaskOf;

namespace pb = ::stoker::v1;

using ::testing::HasSubstr;

pb::JobSpec SmallJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(40);
  synthetic->set_height(16);
  synthetic->set_width(12);
  synthetic->set_channels(3);
  synthetic->set_num_classes(7);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(4);
  spec.set_seed(11);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(2);
  spec.set_epochs(2);
  spec.set_drop_last(true);
  return spec;
}

TEST(SimulateBatchTest, HasTheHeaderAndSizeOfTheRealBatch) {
  auto job = JobContext::Create(1, SmallJob(), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  pb::BatchMessage real, simulated;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 1, 3), 9, &scratch, &real).ok());
  ASSERT_TRUE(SimulateBatch(**job, TaskOf(1, 1, 3), 9, &simulated).ok());
  EXPECT_EQ(simulated.data().size(), real.data().size());
  EXPECT_EQ(simulated.header().task().batch_index(), 3u);
  EXPECT_EQ(std::vector<uint64_t>(simulated.header().sample_indices().begin(),
                                  simulated.header().sample_indices().end()),
            std::vector<uint64_t>(real.header().sample_indices().begin(),
                                  real.header().sample_indices().end()));
  EXPECT_EQ(
      std::vector<int64_t>(simulated.header().shape().begin(), simulated.header().shape().end()),
      std::vector<int64_t>(real.header().shape().begin(), real.header().shape().end()));
  EXPECT_EQ(simulated.header().dtype(), real.header().dtype());
  EXPECT_EQ(simulated.header().worker_id(), 9u);
}

TEST(SimulateBatchTest, TaskPastThePlanIsOutOfRange) {
  auto job = JobContext::Create(1, SmallJob(), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  pb::BatchMessage out;
  EXPECT_EQ(SimulateBatch(**job, TaskOf(1, 0, 1000), 9, &out).code(),
            absl::StatusCode::kOutOfRange);
}

TEST(SimulateBatchTest, StopWakesAProducerHoldingABatchForALongPeriod) {
  auto job = JobContext::Create(1, SmallJob(), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  MessagePool pool(4);
  FakeClock clock;  // never advanced: only Stop ends the wait
  BatchProducer producer(1, 9, &pool, &clock);
  producer.set_simulation(
      SimulatedProduction{absl::Hours(1), SimulatedBatchMode::kSleep, absl::ZeroDuration()});
  absl::Notification done;
  absl::Status result;
  producer.Submit(*job, TaskOf(1, 0, 0),
                  [&](absl::Status status, std::unique_ptr<pb::BatchMessage> batch) {
                    result = status;
                    done.Notify();
                  });
  producer.Stop();  // returns without waiting an hour
  done.WaitForNotification();
  // OK when the thread had taken the task (its batch is finished early), CANCELLED when Stop
  // dropped it from the queue first.
  EXPECT_TRUE(result.ok() || result.code() == absl::StatusCode::kCancelled) << result;
}

TEST(SimulateBatchTest, ABatchIsReadyOnePeriodAfterItsTaskWasTakenOnTheInjectedClock) {
  auto job = JobContext::Create(1, SmallJob(), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  MessagePool pool(4);
  FakeClock clock;
  BatchProducer producer(1, 9, &pool, &clock);
  producer.set_simulation(
      SimulatedProduction{absl::Seconds(1), SimulatedBatchMode::kSleep, absl::ZeroDuration()});
  absl::Notification done;
  producer.Submit(*job, TaskOf(1, 0, 0),
                  [&](absl::Status status, std::unique_ptr<pb::BatchMessage>) {
                    EXPECT_TRUE(status.ok()) << status;
                    done.Notify();
                  });
  clock.AwaitSleepers(1);  // the producer holds the batch until the period has passed
  clock.Advance(absl::Milliseconds(999));
  EXPECT_FALSE(done.HasBeenNotified());
  clock.Advance(absl::Milliseconds(1));
  done.WaitForNotification();
  producer.Stop();
}

// The producer's threads take tasks in fair order between tenants (worker/tenant_fair_queue.h)
// and count each tenant's time: with 6 tasks of tenant x queued before 2 of tenant y, y's come
// within the first four batches (first in, first out: the last two).
TEST(SimulateBatchTest, TheProducerTakesTasksFairlyBetweenTenantsAndCountsTheirTime) {
  auto x_job = JobContext::Create(1, SmallJob(), DatasetIo::FromEnvironment(), "x");
  auto y_job = JobContext::Create(2, SmallJob(), DatasetIo::FromEnvironment(), "y");
  ASSERT_TRUE(x_job.ok() && y_job.ok());
  MessagePool pool(4);
  FakeClock clock;
  BatchProducer producer(1, 9, &pool, &clock);
  producer.set_simulation(
      SimulatedProduction{absl::Seconds(1), SimulatedBatchMode::kSleep, absl::ZeroDuration()});
  absl::Mutex mu;
  std::vector<std::string> order;
  auto submit = [&](const std::shared_ptr<JobContext>& job, uint64_t batch) {
    producer.Submit(
        job, TaskOf(job->job_id(), 0, batch),
        [&, tenant = job->tenant()](absl::Status status, std::unique_ptr<pb::BatchMessage>) {
          EXPECT_TRUE(status.ok()) << status;
          absl::MutexLock lock(&mu);
          order.push_back(tenant);
        });
  };
  for (uint64_t batch = 0; batch < 6; ++batch) submit(*x_job, batch);
  for (uint64_t batch = 0; batch < 2; ++batch) submit(*y_job, batch);
  for (size_t done = 0; done < 8; ++done) {
    clock.AwaitSleepers(1);
    clock.Advance(absl::Seconds(1));
    absl::MutexLock lock(&mu);
    auto finished = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu) { return order.size() > done; };
    mu.Await(absl::Condition(&finished));
  }
  producer.Stop();
  EXPECT_EQ(std::count(order.begin(), order.begin() + 4, "y"), 2) << absl::StrJoin(order, " ");
  const auto busy = producer.tenant_busy_seconds();
  EXPECT_EQ(busy.at("x"), 6.0);
  EXPECT_EQ(busy.at("y"), 2.0);
}

bool AllZero(const std::string& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

TEST(SimulatedBatchModeTest, ParsesItsNamesAndNamesTheFieldOtherwise) {
  for (SimulatedBatchMode mode : {SimulatedBatchMode::kSleep, SimulatedBatchMode::kBurn}) {
    absl::StatusOr<SimulatedBatchMode> parsed =
        ParseSimulatedBatchMode(SimulatedBatchModeName(mode));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, mode);
  }
  absl::StatusOr<SimulatedBatchMode> bad = ParseSimulatedBatchMode("spin");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("simulate_batch_mode: expected sleep or burn, got 'spin'"));
}

// The thread CPU clock, not the wall clock, is what the burn is checked against: a loaded
// machine makes it slower, never shorter.
TEST(BurnThreadCpuTest, SpendsAtLeastTheAskedThreadCpuTimeWritingThePayload) {
  std::string payload(12 << 10, '\0');
  const absl::Duration before = ThreadCpuTime();
  const absl::Duration spent = BurnThreadCpu(absl::Milliseconds(30), before, &payload);
  const absl::Duration after = ThreadCpuTime();
  EXPECT_GE(spent, absl::Milliseconds(30));
  EXPECT_GE(after - before, absl::Milliseconds(30));
  EXPECT_GE(after - before, spent);
  EXPECT_EQ(payload.size(), size_t{12 << 10});  // written over, never resized
  EXPECT_FALSE(AllZero(payload));
}

TEST(BurnThreadCpuTest, BurnsWithAPayloadTooSmallToWrite) {
  std::string payload = "abc";
  const absl::Duration before = ThreadCpuTime();
  EXPECT_GE(BurnThreadCpu(absl::Milliseconds(5), before, &payload), absl::Milliseconds(5));
  EXPECT_GE(ThreadCpuTime() - before, absl::Milliseconds(5));
  EXPECT_EQ(payload, "abc");
}

// Runs `batches` tasks through a one-thread producer with `simulation`; returns the producer
// thread's CPU time when it finished the last one, and that batch's payload.
std::pair<absl::Duration, std::string> RunSimulated(const SimulatedProduction& simulation,
                                                    int batches) {
  // Declared before the producer, so that they outlive its thread (joined by its destructor).
  absl::Mutex mu;
  int finished = 0;  // guarded by mu, as the two below
  absl::Duration thread_cpu;
  std::string payload;
  auto job = JobContext::Create(1, SmallJob(), DatasetIo::FromEnvironment());
  if (!job.ok()) {
    ADD_FAILURE() << job.status();
    return {};
  }
  MessagePool pool(4);
  BatchProducer producer(1, 9, &pool, Clock::Real());  // real CPU burns and real periods
  producer.set_simulation(simulation);
  for (int i = 0; i < batches; ++i) {
    producer.Submit(*job, TaskOf(1, 0, static_cast<uint64_t>(i)),
                    [&](absl::Status status, std::unique_ptr<pb::BatchMessage> batch) {
                      EXPECT_TRUE(status.ok()) << status;
                      absl::MutexLock lock(&mu);
                      thread_cpu = ThreadCpuTime();  // the producer thread's, since its start
                      if (batch != nullptr) payload = batch->data();
                      ++finished;
                    });
  }
  absl::MutexLock lock(&mu);
  auto all_finished = [&] { return finished == batches; };
  mu.Await(absl::Condition(&all_finished));
  return {thread_cpu, payload};  // copied before the lock, the producer and mu go
}

TEST(BurningProducerTest, ItsThreadSpendsTheBatchCpuTimeOfEveryBatch) {
  const auto [cpu, payload] =
      RunSimulated(SimulatedProduction{absl::Milliseconds(40), SimulatedBatchMode::kBurn,
                                       absl::Milliseconds(20)},
                   3);
  EXPECT_GE(cpu, 3 * absl::Milliseconds(20));
  EXPECT_EQ(payload.size(), size_t{4 * 16 * 12 * 3 * sizeof(float)});
  EXPECT_FALSE(AllZero(payload));
}

TEST(BurningProducerTest, ASleepingProducerLeavesThePayloadAlone) {
  // The control of the test above: the same run asleep writes nothing into the payload.
  const auto [cpu, payload] = RunSimulated(
      SimulatedProduction{absl::Milliseconds(5), SimulatedBatchMode::kSleep, absl::ZeroDuration()},
      3);
  EXPECT_EQ(payload.size(), size_t{4 * 16 * 12 * 3 * sizeof(float)});
  EXPECT_TRUE(AllZero(payload));
}

}  // namespace
}  // namespace stoker
