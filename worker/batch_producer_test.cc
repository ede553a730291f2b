#include "worker/batch_producer.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

pb::JobSpec BlurJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(40);
  synthetic->set_height(16);
  synthetic->set_width(12);
  synthetic->set_channels(3);
  synthetic->set_num_classes(7);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur()->set_ksize(5);
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->set_output_layout(pb::LAYOUT_CHW);
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

TEST(ProduceBatchTest, FollowsThePlanAndIsDeterministic) {
  auto job = JobContext::Create(1, BlurJob());
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch_a, scratch_b;
  pb::BatchMessage a, b;
  ASSERT_TRUE(ProduceBatch(**job, Task(1, 3), 9, &scratch_a, &a).ok());
  ASSERT_TRUE(ProduceBatch(**job, Task(1, 3), 9, &scratch_b, &b).ok());
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
  ASSERT_TRUE(ProduceBatch(**job, Task(0, 3), 9, &scratch_a, &a).ok());
  EXPECT_NE(a.data(), b.data());
}

TEST(ProduceBatchTest, TaskPastThePlanIsOutOfRange) {
  auto job = JobContext::Create(1, BlurJob());
  ASSERT_TRUE(job.ok());
  ProducerScratch scratch;
  pb::BatchMessage out;
  // 40 samples / 4 = 10 batches, 5 per rank; a resumed epoch may add pad batches up to
  // BatchIndexLimit(10, 2) = 24, so 24 does not exist.
  EXPECT_EQ(ProduceBatch(**job, Task(0, 24), 1, &scratch, &out).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ProduceBatch(**job, Task(2, 0), 1, &scratch, &out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BatchProducerTest, ProducesOnThreadsAndCountsBatches) {
  auto job = JobContext::Create(1, BlurJob());
  ASSERT_TRUE(job.ok());
  BatchMessagePool pool(4);
  BatchProducer producer(2, 5, &pool);
  absl::Mutex mu;
  int done = 0;
  absl::Notification all_done;
  for (uint64_t g = 0; g < 10; ++g) {
    producer.Submit(*job, Task(0, g), [&](absl::Status status,
                                          std::unique_ptr<pb::BatchMessage> batch) {
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
  producer.Submit(*job, Task(0, 0), [&](absl::Status status, std::unique_ptr<pb::BatchMessage>) {
    cancelled = status.code() == absl::StatusCode::kCancelled;
  });
  EXPECT_TRUE(cancelled);
}

}  // namespace
}  // namespace stoker
