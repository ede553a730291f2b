// MixUp/CutMix through the whole path (TestCluster: coordinator, two workers, a trainer client
// over loopback gRPC): every batch arrives with soft labels, and it is exactly the batch one
// ProduceBatch call makes in this process, whichever worker made it (the lambda and box come
// from the batch's counter RNG).

#include <cmath>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"
#include "worker/batch_producer.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

pb::JobSpec MixJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(96);
  synthetic->set_height(12);
  synthetic->set_width(10);
  synthetic->set_channels(3);
  synthetic->set_num_classes(5);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->set_output_layout(pb::LAYOUT_CHW);
  pb::BatchMixOp* mix = spec.mutable_pipeline()->mutable_batch_mix();
  mix->set_num_classes(5);
  mix->set_mixup_alpha(0.8f);
  mix->set_cutmix_alpha(1.0f);
  spec.set_batch_size(8);
  spec.set_seed(77);
  spec.set_world_size(1);
  spec.set_epochs(2);
  spec.set_drop_last(true);
  return spec;
}

TEST(BatchMixIntegrationTest, AJobYieldsSoftLabelsIdenticalToLocalProduction) {
  TestClusterOptions cluster_options;
  cluster_options.workers = 2;
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(cluster_options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const pb::JobSpec spec = MixJob();
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = (*cluster)->tls_for(Role::kTrainer);
  options.job_name = "mix";
  options.spec = spec;
  options.heartbeat_interval = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(options);
  ASSERT_TRUE(loader.ok()) << loader.status();

  absl::StatusOr<std::shared_ptr<JobContext>> local =
      JobContext::Create(1, spec, DatasetIo::FromEnvironment());
  ASSERT_TRUE(local.ok()) << local.status();
  ProducerScratch scratch;
  std::set<std::pair<uint32_t, uint64_t>> seen;
  int mixed_batches = 0;
  while (true) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (batch.status().code() == absl::StatusCode::kOutOfRange) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_TRUE(seen.insert({batch->epoch(), batch->batch_index()}).second);
    ASSERT_EQ(batch->num_classes(), 5u);
    const absl::Span<const float> soft = batch->soft_labels();
    ASSERT_EQ(soft.size(), 8u * 5);
    for (size_t i = 0; i < 8; ++i) {
      double sum = 0;
      for (size_t c = 0; c < 5; ++c) sum += soft[i * 5 + c];
      EXPECT_NEAR(sum, 1.0, 1e-6);
      EXPECT_GT(soft[i * 5 + batch->labels()[i]], 0.0f);  // its own label keeps a weight
    }
    if (*std::max_element(soft.begin(), soft.end()) < 1.0f) ++mixed_batches;

    pb::TaskId task;
    task.set_job_id(1);
    task.set_epoch(batch->epoch());
    task.set_batch_index(batch->batch_index());
    pb::BatchMessage expected;
    ASSERT_TRUE(ProduceBatch(**local, task, 0, &scratch, &expected).ok());
    EXPECT_EQ(std::string(batch->bytes().begin(), batch->bytes().end()), expected.data())
        << "batch " << batch->batch_index();
    EXPECT_EQ(std::vector<float>(soft.begin(), soft.end()),
              std::vector<float>(expected.header().soft_labels().begin(),
                                 expected.header().soft_labels().end()));
  }
  EXPECT_EQ(seen.size(), 2u * 12);
  EXPECT_GT(mixed_batches, 0);
}

}  // namespace
}  // namespace stoker
