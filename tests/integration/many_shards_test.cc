// A worker serving a dataset of 20,000 shards (issue 22): reading across every shard, it keeps at
// most --max-open-shards of them open (file descriptors counted in /proc/self/fd), and every
// sample arrives once with its label; the process's RSS stays flat across the epoch.

#include <dirent.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "data/manifest.h"
#include "data/open_shards.h"
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
using ::stoker::testing::TempDir;

constexpr int kShards = 20000;
constexpr uint64_t kMaxOpenShards = 8;

// File descriptors this process holds open, less the listing's own.
int OpenFiles() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 1 << 20;  // EMFILE: the process ran out of descriptors.
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count - 3;  // ".", ".." and the listing's descriptor
}

// VmRSS of this process in bytes.
uint64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// One packed shard of 2 small JPEGs (labels 0 and 1), and a manifest of kShards shards that are
// links to it: sample i holds image i % 2.
std::string WriteManyShardDataset(const TempDir& dir) {
  ImageFolderSpec images;
  images.dir = dir.File("images");
  images.classes = 2;
  images.per_class = 1;
  images.width = 16;
  images.height = 16;
  PackOptions pack;
  pack.output_dir = dir.File("packed");
  const auto summary = PackGeneratedImages(*Storage::FromEnvironment(), images, pack);
  EXPECT_TRUE(summary.ok()) << summary.status();
  pb::ShardManifest manifest;
  manifest.set_version(1);
  for (int s = 0; s < kShards; ++s) {
    const std::string name = absl::StrCat("shard-", s, ".stoker");
    std::filesystem::create_symlink(dir.File("packed/shard-00000.stoker"), dir.File(name));
    pb::ManifestShard* shard = manifest.add_shards();
    shard->set_path(name);
    shard->set_records(2);
  }
  manifest.add_class_names("class-000");
  manifest.add_class_names("class-001");
  EXPECT_TRUE(WriteManifest(*Storage::FromEnvironment(), manifest, dir.File("manifest.json")).ok());
  return dir.File("manifest.json");
}

TEST(ManyShardsTest, AWorkerKeepsAtMostMaxOpenShardsOpenAndItsMemoryFlat) {
  TempDir dir;
  const std::string manifest = WriteManyShardDataset(dir);
  TestClusterOptions cluster_options;
  cluster_options.workers = 1;
  cluster_options.io.shards =
      std::make_shared<OpenShardPool>(OpenShardLimits{kMaxOpenShards, uint64_t{1} << 20});
  auto cluster = TestCluster::Start(cluster_options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();

  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_shards()->set_manifest(manifest);
  *spec.mutable_pipeline() = *ParsePipelineText("decode, resize(height=8, width=8)");
  spec.set_batch_size(100);
  spec.set_seed(3);
  spec.set_world_size(1);
  spec.set_epochs(1);
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = (*cluster)->tls_for(Role::kTrainer);
  options.job_name = "many-shards";
  options.spec = spec;
  options.heartbeat_interval = absl::Milliseconds(50);
  options.prefetch_bytes = 4 * 100 * 8 * 8 * 3;
  auto loader = Loader::Open(std::move(options));
  ASSERT_TRUE(loader.ok()) << loader.status();

  std::map<uint64_t, int> seen;
  int baseline = -1;
  int most_open = 0;
  int batches = 0;
  uint64_t rss_after_warmup = 0, most_rss = 0;
  ASSERT_TRUE(DrainLoader(**loader, [&](Batch& batch) {
                // After the first batch the connections are up: count what shards add.
                const int open = OpenFiles();
                if (baseline < 0) baseline = open;
                most_open = std::max(most_open, open);
                const uint64_t rss = ResidentBytes();
                if (++batches == 20) rss_after_warmup = rss;
                most_rss = std::max(most_rss, rss);
                for (size_t i = 0; i < batch.num_samples(); ++i) {
                  const uint64_t sample = batch.sample_indices()[i];
                  EXPECT_EQ(batch.labels()[i], static_cast<int64_t>(sample % 2)) << sample;
                  ++seen[sample];
                }
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(seen.size(), 2u * kShards);
  for (const auto& [sample, n] : seen) ASSERT_EQ(n, 1) << "sample " << sample;
  // Global shuffle touches every shard in the first batches; beyond the baseline (which holds
  // at most kMaxOpenShards shards) a few descriptors of the cluster may come and go.
  EXPECT_LE(most_open - baseline, static_cast<int>(kMaxOpenShards));
  EXPECT_LE(cluster_options.io.shards->held(), kMaxOpenShards);
  (*cluster).reset();
  ASSERT_GT(batches, 20);
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine holds freed memory on purpose (190 MB of growth measured): the check would
  // measure it, not the worker. Shown as skipped; the checks above ran.
  GTEST_SKIP() << "RSS is not measured under AddressSanitizer";
#endif
  // RSS flat across the epoch: measured 0.3 MB of growth after the first 20 of 400 batches; a
  // worker keeping every shard it opened would grow by its 20,000 shards' state (several MB).
  EXPECT_LE(most_rss - rss_after_warmup, uint64_t{4} << 20)
      << "RSS grew from " << rss_after_warmup << " to " << most_rss;
}

}  // namespace
}  // namespace stoker
