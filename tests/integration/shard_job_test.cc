// Jobs over packed JPEG shards, end to end: generated images → stoker-pack → coordinator and
// workers (decode, random_resized_crop, flip, normalize) → trainer clients. Checks exactly-once
// delivery with the right labels, and bad-sample replacement and the error-rate limit.

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "augment/pipeline_text.h"
#include "data/storage_backend.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/packed_images.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::stoker::testing::CorruptShardRecord;
using ::stoker::testing::TempDir;
using ::testing::HasSubstr;

constexpr uint32_t kClasses = 4;
constexpr uint32_t kPerClass = 12;  // 48 samples; packed sorted by class: label = index / 12.
constexpr uint32_t kBatch = 4;
constexpr uint32_t kSide = 32;

class ShardJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ImageFolderSpec images;
    images.dir = dir_.File("images");
    images.classes = kClasses;
    images.per_class = kPerClass;
    images.width = 160;
    images.height = 120;
    PackOptions pack;
    pack.output_dir = dir_.File("shards");
    pack.shard_bytes = 32 * 1024;  // A few shards.
    auto summary = PackGeneratedImages(*Storage::FromEnvironment(), images, pack);
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_GT(summary->shards, 1u);
    manifest_ = pack.output_dir + "/manifest.json";
    auto cluster = TestCluster::Start(2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  pb::JobSpec Spec(uint32_t world_size, uint32_t epochs) const {
    pb::JobSpec spec;
    spec.mutable_dataset()->mutable_shards()->set_manifest(manifest_);
    *spec.mutable_pipeline() = *ParsePipelineText(
        "decode, random_resized_crop(height=32, width=32), horizontal_flip, to_float, "
        "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])");
    spec.mutable_pipeline()->set_output_layout(pb::LAYOUT_CHW);
    spec.set_batch_size(kBatch);
    spec.set_seed(7);
    spec.set_world_size(world_size);
    spec.set_epochs(epochs);
    spec.set_drop_last(true);
    return spec;
  }

  LoaderOptions Options(const std::string& job, const pb::JobSpec& spec, uint32_t rank) const {
    LoaderOptions options;
    options.coordinator_address = cluster_->coordinator_address();
    options.tls = cluster_->tls_for(Role::kTrainer);
    options.job_name = job;
    options.spec = spec;
    options.rank = rank;
    options.heartbeat_interval = absl::Milliseconds(50);
    options.prefetch_bytes = 2 * kBatch * 3 * kSide * kSide * sizeof(float);
    return options;
  }

  // A CRC mismatch in record `record` of the first shard (= sample `record`).
  void CorruptRecord(uint64_t record) {
    CorruptShardRecord(dir_.File("shards/shard-00000.stoker"), record);
  }

  TempDir dir_;
  std::string manifest_;
  std::unique_ptr<TestCluster> cluster_;
};

// (epoch → sample → times seen) over every batch of one rank; fails on a wrong label.
absl::Status Consume(LoaderOptions options, std::map<uint32_t, std::map<uint64_t, int>>* seen,
                     uint64_t* batches) {
  auto loader = Loader::Open(std::move(options));
  if (!loader.ok()) return loader.status();
  return DrainLoader(**loader, [&](Batch& batch) {
    ++*batches;
    for (size_t i = 0; i < batch.num_samples(); ++i) {
      const uint64_t sample = batch.sample_indices()[i];
      EXPECT_EQ(batch.labels()[i], static_cast<int64_t>(sample / kPerClass)) << sample;
      ++(*seen)[batch.epoch()][sample];
    }
    return absl::OkStatus();
  });
}

TEST_F(ShardJobTest, TwoRanksGetEverySampleOnceWithItsLabel) {
  const pb::JobSpec spec = Spec(2, 2);
  std::map<uint32_t, std::map<uint64_t, int>> seen[2];
  uint64_t batches[2] = {0, 0};
  absl::Status status[2];
  std::vector<std::thread> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    ranks.emplace_back(
        [&, r] { status[r] = Consume(Options("shards", spec, r), &seen[r], &batches[r]); });
  }
  for (std::thread& t : ranks) t.join();
  ASSERT_TRUE(status[0].ok()) << status[0];
  ASSERT_TRUE(status[1].ok()) << status[1];
  EXPECT_EQ(batches[0], 12u);  // 48 / 4 = 12 batches per epoch, 6 per rank, 2 epochs.
  EXPECT_EQ(batches[1], 12u);
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    std::map<uint64_t, int> both = seen[0][epoch];
    for (const auto& [sample, n] : seen[1][epoch]) both[sample] += n;
    ASSERT_EQ(both.size(), kClasses * kPerClass) << "epoch " << epoch;
    for (const auto& [sample, n] : both) EXPECT_EQ(n, 1) << "sample " << sample;
  }
}

TEST_F(ShardJobTest, CorruptRecordsAreReplacedAndCountsStayEqual) {
  CorruptRecord(1);
  CorruptRecord(3);
  pb::JobSpec spec = Spec(1, 1);
  spec.set_max_bad_sample_fraction(0.1);  // 2 of 48 is under 10%.
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  uint64_t batches = 0;
  ASSERT_TRUE(Consume(Options("replaced", spec, 0), &seen, &batches).ok());
  EXPECT_EQ(batches, 12u);
  int delivered = 0;
  for (const auto& [sample, n] : seen[0]) delivered += n;
  EXPECT_EQ(delivered, 48);
  EXPECT_EQ(seen[0].count(1), 0u);
  EXPECT_EQ(seen[0].count(3), 0u);
  EXPECT_EQ(seen[0].size(), 46u);  // Two good samples were delivered twice, in place of the bad.
}

TEST_F(ShardJobTest, OverTheLimitTheJobFailsWithDataLoss) {
  CorruptRecord(1);
  CorruptRecord(3);
  pb::JobSpec spec = Spec(1, 1);
  spec.set_max_bad_sample_fraction(0.03);  // 1.44 samples allowed: the second bad one fails it.
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  uint64_t batches = 0;
  absl::Status status = Consume(Options("over-limit", spec, 0), &seen, &batches);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("2 of 48 samples of epoch 0 for rank 0 unreadable (limit 3%): "
                        "corrupt_record=2"));
}

}  // namespace
}  // namespace stoker
