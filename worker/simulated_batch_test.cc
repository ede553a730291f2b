#include "worker/simulated_batch.h"

#include <memory>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "worker/batch_producer.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

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

pb::TaskId Task(uint32_t epoch, uint64_t batch) {
  pb::TaskId task;
  task.set_job_id(1);
  task.set_epoch(epoch);
  task.set_batch_index(batch);
  return task;
}

TEST(SimulateBatchTest, HasTheHeaderAndSizeOfTheRealBatch) {
  auto job = JobContext::Create(1, SmallJob());
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  pb::BatchMessage real, simulated;
  ASSERT_TRUE(ProduceBatch(**job, Task(1, 3), 9, &scratch, &real).ok());
  ASSERT_TRUE(SimulateBatch(**job, Task(1, 3), 9, &simulated).ok());
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
  auto job = JobContext::Create(1, SmallJob());
  ASSERT_TRUE(job.ok()) << job.status();
  pb::BatchMessage out;
  EXPECT_EQ(SimulateBatch(**job, Task(0, 1000), 9, &out).code(), absl::StatusCode::kOutOfRange);
}

TEST(SimulateBatchTest, StopWakesAProducerHoldingABatchForALongPeriod) {
  auto job = JobContext::Create(1, SmallJob());
  ASSERT_TRUE(job.ok()) << job.status();
  BatchMessagePool pool(4);
  BatchProducer producer(1, 9, &pool);
  producer.set_simulated_period(absl::Hours(1));
  absl::Notification done;
  absl::Status result;
  producer.Submit(*job, Task(0, 0),
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

}  // namespace
}  // namespace stoker
