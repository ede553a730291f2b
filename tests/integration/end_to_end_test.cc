// The whole path in one process: coordinator, workers and trainer clients over real gRPC on
// loopback (TestCluster).

#include <map>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

// What a test remembers of one delivered batch.
struct Delivered {
  uint32_t rank;
  uint32_t epoch;
  uint64_t batch_index;
  uint64_t worker_id;
  std::vector<uint64_t> samples;
  size_t content_hash;
};

pb::JobSpec SmallBlurJob(uint64_t num_samples, uint32_t world_size, uint32_t epochs) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(num_samples);
  synthetic->set_height(20);
  synthetic->set_width(18);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur()->set_ksize(5);
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->set_output_layout(pb::LAYOUT_CHW);
  spec.set_batch_size(8);
  spec.set_seed(2024);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(world_size);
  spec.set_epochs(epochs);
  spec.set_drop_last(true);
  return spec;
}

LoaderOptions Options(const TestCluster& cluster, const std::string& job, const pb::JobSpec& spec,
                      uint32_t rank) {
  LoaderOptions options;
  options.coordinator_address = cluster.coordinator_address();
  options.tls = cluster.tls_for(Role::kTrainer);
  options.job_name = job;
  options.spec = spec;
  options.rank = rank;
  options.heartbeat_interval = absl::Milliseconds(50);
  // Two batches of prefetch: credit has to flow back for the job to finish.
  options.prefetch_bytes = 2 * 8 * 3 * 20 * 18 * sizeof(float);
  return options;
}

// Consumes every batch of every epoch with Next(); returns what arrived or the first error.
absl::StatusOr<std::vector<Delivered>> ConsumeAll(LoaderOptions options) {
  const uint32_t rank = options.rank;
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(std::move(options));
  if (!loader.ok()) return loader.status();
  std::vector<Delivered> delivered;
  absl::Status drained = DrainLoader(**loader, [&](Batch& batch) {
    auto samples = batch.sample_indices();
    auto bytes = batch.bytes();
    delivered.push_back(Delivered{rank, batch.epoch(), batch.batch_index(), batch.worker_id(),
                                  std::vector<uint64_t>(samples.begin(), samples.end()),
                                  std::hash<std::string_view>()(std::string_view(
                                      reinterpret_cast<const char*>(bytes.data()), bytes.size()))});
    return absl::OkStatus();
  });
  if (!drained.ok()) return drained;
  return delivered;
}

TEST(EndToEndTest, TwoRanksThreeWorkersTwoEpochsDeliverEverySampleOnce) {
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const uint64_t kSamples = 96;  // 12 batches of 8: 6 per rank per epoch.
  const pb::JobSpec spec = SmallBlurJob(kSamples, 2, 2);

  absl::StatusOr<std::vector<Delivered>> results[2];
  std::vector<std::thread> ranks;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    ranks.emplace_back(
        [&, rank] { results[rank] = ConsumeAll(Options(**cluster, "e2e", spec, rank)); });
  }
  for (std::thread& t : ranks) t.join();
  ASSERT_TRUE(results[0].ok()) << results[0].status();
  ASSERT_TRUE(results[1].ok()) << results[1].status();

  // Equal counts per rank, and only that rank's batches (g ≡ r mod R).
  EXPECT_EQ(results[0]->size(), 12u);
  EXPECT_EQ(results[1]->size(), 12u);
  std::map<uint32_t, std::map<uint64_t, int>> per_epoch_samples;
  std::set<uint64_t> workers_seen;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    uint32_t last_epoch = 0;
    for (const Delivered& d : *results[rank]) {
      EXPECT_EQ(d.batch_index % 2, rank);
      EXPECT_GE(d.epoch, last_epoch) << "epochs must not interleave";
      last_epoch = d.epoch;
      EXPECT_EQ(d.samples.size(), 8u);
      for (uint64_t s : d.samples) ++per_epoch_samples[d.epoch][s];
      workers_seen.insert(d.worker_id);
    }
  }
  // Every sample exactly once per epoch across the ranks.
  ASSERT_EQ(per_epoch_samples.size(), 2u);
  for (const auto& [epoch, counts] : per_epoch_samples) {
    EXPECT_EQ(counts.size(), kSamples) << "epoch " << epoch;
    for (const auto& [sample, count] : counts) {
      EXPECT_EQ(count, 1) << "epoch " << epoch << " sample " << sample;
    }
  }
  // The epochs were shuffled differently.
  EXPECT_NE((*results[0])[0].samples, (*results[0])[6].samples);
  // Every worker served: the client streams from all live workers, each with at least one
  // credit, over 24 batches.
  EXPECT_EQ(workers_seen.size(), 3u);
}

TEST(EndToEndTest, SameTaskFromDifferentWorkersIsBitIdentical) {
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const pb::JobSpec spec = SmallBlurJob(48, 1, 2);

  // Two jobs with the same spec, each pinned to one worker: every task is made by both.
  std::map<std::pair<uint32_t, uint64_t>, const Delivered*> by_task;
  std::vector<Delivered> runs[2];
  for (int w = 0; w < 2; ++w) {
    LoaderOptions options = Options(**cluster, "pinned-" + std::to_string(w), spec, 0);
    options.only_workers = {(*cluster)->worker(w)->address()};
    absl::StatusOr<std::vector<Delivered>> delivered = ConsumeAll(options);
    ASSERT_TRUE(delivered.ok()) << delivered.status();
    runs[w] = *std::move(delivered);
  }
  ASSERT_EQ(runs[0].size(), 12u);
  ASSERT_EQ(runs[1].size(), 12u);
  for (const Delivered& d : runs[0]) by_task[{d.epoch, d.batch_index}] = &d;
  for (const Delivered& d : runs[1]) {
    const Delivered* other = by_task.at({d.epoch, d.batch_index});
    EXPECT_NE(other->worker_id, d.worker_id);
    EXPECT_EQ(other->samples, d.samples);
    EXPECT_EQ(other->content_hash, d.content_hash)
        << "epoch " << d.epoch << " batch " << d.batch_index;
  }
}

TEST(EndToEndTest, BadJobsAreRejectedWithTheFieldNamed) {
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto expect_invalid = [&](const pb::JobSpec& spec, uint32_t rank, const std::string& field) {
    LoaderOptions options = Options(**cluster, "bad", spec, rank);
    absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(options);
    ASSERT_FALSE(loader.ok());
    EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument) << loader.status();
    EXPECT_THAT(std::string(loader.status().message()), HasSubstr(field));
  };
  pb::JobSpec even_ksize = SmallBlurJob(16, 1, 1);
  even_ksize.mutable_pipeline()->mutable_ops(1)->mutable_gaussian_blur()->set_ksize(4);
  expect_invalid(even_ksize, 0, "ksize");
  pb::JobSpec negative_ksize = SmallBlurJob(16, 1, 1);
  negative_ksize.mutable_pipeline()->mutable_ops(1)->mutable_gaussian_blur()->set_ksize(-3);
  expect_invalid(negative_ksize, 0, "ksize");
  pb::JobSpec unknown_op = SmallBlurJob(16, 1, 1);
  unknown_op.mutable_pipeline()->add_ops();  // An op with nothing set.
  expect_invalid(unknown_op, 0, "ops[3]");
  pb::JobSpec zero_batch = SmallBlurJob(16, 1, 1);
  zero_batch.set_batch_size(0);
  expect_invalid(zero_batch, 0, "batch_size");
  pb::JobSpec zero_world = SmallBlurJob(16, 1, 1);
  zero_world.set_world_size(0);
  expect_invalid(zero_world, 0, "world_size");
  expect_invalid(SmallBlurJob(16, 2, 1), 2, "rank");
}

TEST(EndToEndTest, SameNameWithAnotherSpecIsAlreadyExists) {
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Two ranks of one job: a rank's reports come from one live client only (coordinator.h).
  auto first = Loader::Open(Options(**cluster, "twice", SmallBlurJob(16, 2, 1), 0));
  ASSERT_TRUE(first.ok()) << first.status();
  auto again = Loader::Open(Options(**cluster, "twice", SmallBlurJob(16, 2, 1), 1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->job_id(), (*first)->job_id());
  auto other = Loader::Open(Options(**cluster, "twice", SmallBlurJob(24, 2, 1), 0));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists) << other.status();
}

}  // namespace
}  // namespace stoker
