// Jobs reading a dataset packed into a bucket of the loopback S3 server (s3rver behind a
// SigV4-verifying proxy): stoker-pack writes the bucket, a TestCluster runs 2-epoch jobs with
// credentials from each source, every sample arrives exactly once per epoch, and the second
// epoch comes from the worker-local shard cache (no shard GET after the first fill). A dataset
// 10x the cache: the shard-window shuffle fetches every shard once per epoch, GLOBAL reads ranged
// records with read amplification <= 1.5. Errors: a wrong secret, a missing bucket, and the
// server stopped in the middle of an epoch.

#include <fcntl.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "augment/pipeline_text.h"
#include "data/manifest.h"
#include "data/open_shards.h"
#include "data/storage_backend.h"
#include "data/testing/s3_test_server.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pack/image_generator.h"
#include "pack/packer.h"
#include "prometheus/metric_family.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/packed_images.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::stoker::testing::ReadFile;
using ::stoker::testing::S3TestServer;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint32_t kClasses = 4;
constexpr uint32_t kPerClass = 12;
constexpr uint32_t kSamples = kClasses * kPerClass;
constexpr uint32_t kBatch = 4;
constexpr char kManifest[] = "s3://data/ds/manifest.json";

using Vars = std::map<std::string, std::string>;

class S3JobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::S3TestServerOptions options;
    options.sts_ttl_seconds = 1;
    auto server = S3TestServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto certs = TestCerts::Make();
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = *std::move(certs);
    ImageFolderSpec images;
    images.dir = dir_.File("images");
    images.classes = kClasses;
    images.per_class = kPerClass;
    images.width = 160;
    images.height = 120;
    UseStorage(EnvKeys(), /*cache=*/false);
    PackOptions pack;
    pack.output_dir = "s3://data/ds";
    pack.shard_bytes = 32 * 1024;
    auto summary = PackGeneratedImages(*storage_, images, pack);
    ASSERT_TRUE(summary.ok()) << summary.status();
    shards_ = summary->shards;
    ASSERT_GT(shards_, 3u);
  }
  void TearDown() override { cluster_.reset(); }

  Vars EnvKeys() const {
    return {{"AWS_ACCESS_KEY_ID", server_->options().access_key_id},
            {"AWS_SECRET_ACCESS_KEY", server_->options().secret_access_key},
            {"AWS_EC2_METADATA_DISABLED", "true"}};
  }

  // Makes the storage jobs read through, with a fresh pool of open shards of `limits` (so that
  // this test's shards are fetched through this storage, not found open from the last), and
  // starts the cluster again with them: its coordinator and workers share both, as a process's
  // sources do.
  void UseStorage(Vars vars, bool cache, uint64_t cache_bytes = 64 << 20,
                  OpenShardLimits limits = {}) {
    AwsEnvironment env = AwsEnvironment::Real();
    env.getenv = [vars](const std::string& name) {
      const auto it = vars.find(name);
      return it == vars.end() ? std::string() : it->second;
    };
    StorageOptions options;
    options.s3.endpoint = server_->endpoint();
    if (cache) options.cache = ShardCacheOptions{dir_.File("cache"), cache_bytes};
    auto storage = Storage::Create(options, env);
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *storage;
    cluster_.reset();
    TestClusterOptions cluster_options;
    cluster_options.workers = 2;
    cluster_options.certs = certs_;
    cluster_options.io = DatasetIo{storage_, std::make_shared<OpenShardPool>(limits)};
    auto cluster = TestCluster::Start(cluster_options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  pb::JobSpec Spec() const {
    pb::JobSpec spec;
    spec.mutable_dataset()->mutable_shards()->set_manifest(kManifest);
    *spec.mutable_pipeline() =
        *ParsePipelineText("decode, random_resized_crop(height=32, width=32), horizontal_flip");
    spec.set_batch_size(kBatch);
    spec.set_seed(11);
    spec.set_world_size(1);
    spec.set_epochs(2);
    spec.set_drop_last(true);
    spec.set_shuffle(pb::SHUFFLE_MODE_NONE);  // Shards are opened one after another.
    return spec;
  }

  // Runs `job` to the end; (epoch → sample → times seen). `pause` between batches stretches
  // the job over the life of short session tokens; `on_batch(n)` runs after batch n.
  absl::Status Run(const std::string& job, std::map<uint32_t, std::map<uint64_t, int>>* seen,
                   absl::Duration pause = absl::ZeroDuration(),
                   const std::function<void(int)>& on_batch = nullptr) {
    LoaderOptions options;
    options.coordinator_address = cluster_->coordinator_address();
    options.tls = cluster_->tls_for(Role::kTrainer);
    options.job_name = job;
    options.spec = Spec();
    if (adjust_spec_) adjust_spec_(&options.spec);
    options.heartbeat_interval = absl::Milliseconds(50);
    options.prefetch_bytes = 2 * kBatch * 3 * 32 * 32;
    auto loader = Loader::Open(std::move(options));
    if (!loader.ok()) return loader.status();
    int n = 0;
    return DrainLoader(**loader, [&](Batch& batch) {
      for (size_t i = 0; i < batch.num_samples(); ++i) {
        EXPECT_EQ(batch.labels()[i], static_cast<int64_t>(batch.sample_indices()[i] / kPerClass));
        ++(*seen)[batch.epoch()][batch.sample_indices()[i]];
      }
      if (on_batch) on_batch(n++);
      absl::SleepFor(pause);
      return absl::OkStatus();
    });
  }

  static void ExpectExactlyOnce(const std::map<uint32_t, std::map<uint64_t, int>>& seen) {
    ASSERT_EQ(seen.size(), 2u);
    for (const auto& [epoch, samples] : seen) {
      EXPECT_EQ(samples.size(), kSamples) << "epoch " << epoch;
      for (const auto& [sample, n] : samples) EXPECT_EQ(n, 1) << epoch << "/" << sample;
    }
  }

  int ShardGets() const { return server_->CountRequests("GET", "/data/ds/shard-"); }

  // Packs the images again into s3://data/big/, about 16 shards of 3 images; returns the bytes
  // of all its shards. Jobs then read it.
  uint64_t PackSixteenShards() {
    auto images = storage_->List(dir_.File("images"));
    EXPECT_TRUE(images.ok()) << images.status();
    uint64_t image_bytes = 0;
    for (const StorageEntry& image : *images) image_bytes += image.size;
    PackOptions pack;
    pack.input = dir_.File("images");
    pack.output_dir = "s3://data/big";
    pack.shard_bytes = image_bytes / 16;
    auto plan = PlanPack(*storage_, pack);
    EXPECT_TRUE(plan.ok()) << plan.status();
    PackCounters counters;
    EXPECT_TRUE(Pack(*storage_, pack, *plan, &counters).ok());
    auto manifest = ReadManifest(*storage_, "s3://data/big/manifest.json");
    EXPECT_TRUE(manifest.ok()) << manifest.status();
    uint64_t bytes = 0;
    for (const auto& shard : manifest->shards()) bytes += shard.bytes();
    big_shards_ = manifest->shards_size();
    EXPECT_GE(big_shards_, 12u);
    adjust_spec_ = [](pb::JobSpec* spec) {
      spec->mutable_dataset()->mutable_shards()->set_manifest("s3://data/big/manifest.json");
    };
    return bytes;
  }

  // Successful GETs of each shard of s3://data/big/, from the server's log.
  std::map<std::string, int> BigShardGets() const {
    std::map<std::string, int> gets;
    for (const std::string& line : server_->LogLines()) {
      const std::vector<std::string> fields = absl::StrSplit(line, ' ');
      if (fields.size() == 3 && fields[0] == "GET" &&
          absl::StartsWith(fields[1], "/data/big/shard-") &&
          (fields[2] == "200" || fields[2] == "206")) {
        ++gets[fields[1]];
      }
    }
    return gets;
  }

  // Runs a 2-epoch job with `vars` and the cache; checks delivery and that each shard was
  // fetched from the bucket once (the fill), so epoch 2 read nothing from it.
  void RunCachedJob(const std::string& job, Vars vars, absl::Duration pause) {
    UseStorage(std::move(vars), /*cache=*/true);
    const int before = ShardGets();
    std::map<uint32_t, std::map<uint64_t, int>> seen;
    int gets_after_epoch_0 = -1;
    ASSERT_TRUE(Run(job, &seen, pause, [&](int n) {
                  if (n == static_cast<int>(kSamples / kBatch) - 1)
                    gets_after_epoch_0 = ShardGets();
                }).ok());
    ExpectExactlyOnce(seen);
    EXPECT_EQ(ShardGets() - before, static_cast<int>(shards_));
    EXPECT_EQ(ShardGets(), gets_after_epoch_0);  // Epoch 2: no GET of a shard.
    const ShardCacheStats stats = storage_->cache()->stats();
    EXPECT_EQ(stats.misses, shards_);
  }

  TempDir dir_;
  std::unique_ptr<S3TestServer> server_;
  std::shared_ptr<const TestCerts> certs_;
  std::shared_ptr<Storage> storage_;  // UseStorage's.
  std::unique_ptr<TestCluster> cluster_;
  uint64_t shards_ = 0;
  uint64_t big_shards_ = 0;  // Shards of s3://data/big/.
  // Applied to Spec() by Run.
  std::function<void(pb::JobSpec*)> adjust_spec_;
};

// The value of the single series of `name` among `families`, or -1.
double Metric(const std::vector<prometheus::MetricFamily>& families, const std::string& name) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name != name) continue;
    const prometheus::ClientMetric& metric = family.metric.at(0);
    return family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                          : metric.gauge.value;
  }
  return -1;
}

TEST_F(S3JobTest, EnvironmentCredentialsAndTheCacheServesEpochTwo) {
  RunCachedJob("env", EnvKeys(), absl::ZeroDuration());
  const auto families = StorageMetrics(storage_).Collect();
  const ShardCacheStats stats = storage_->cache()->stats();
  EXPECT_EQ(Metric(families, "stoker_shard_cache_misses_total"), static_cast<double>(shards_));
  EXPECT_EQ(Metric(families, "stoker_shard_cache_hits_total"), static_cast<double>(stats.hits));
  EXPECT_DOUBLE_EQ(Metric(families, "stoker_shard_cache_hit_ratio"),
                   static_cast<double>(stats.hits) / (stats.hits + stats.misses));
  EXPECT_GT(Metric(families, "stoker_s3_requests_total"), 0);
}

TEST_F(S3JobTest, ShardWindowFetchesEveryShardOncePerEpochFromACacheOfTwoWindowsPerWorker) {
  UseStorage(EnvKeys(), /*cache=*/false);
  const uint64_t dataset_bytes = PackSixteenShards();
  // The sizing rule of docs/storage.md: two windows of shards fit the cache, for each worker.
  // The cluster's two workers share this process's cache and open-shard pool, so 2 × 2
  // one-shard windows: a quarter of the 16-shard dataset. (With less, one worker's fill evicts
  // the shard the other is reading, which then reads by ranges: more GETs, timing-dependent.)
  UseStorage(EnvKeys(), /*cache=*/true, dataset_bytes / 4, OpenShardLimits{4, 1 << 20});
  auto adjust = adjust_spec_;
  adjust_spec_ = [adjust](pb::JobSpec* spec) {
    adjust(spec);
    spec->set_shuffle(pb::SHUFFLE_MODE_SHARD_WINDOW);
    spec->set_shuffle_window_shards(1);
  };
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  ASSERT_TRUE(Run("window", &seen).ok());
  ExpectExactlyOnce(seen);
  const std::map<std::string, int> gets = BigShardGets();
  EXPECT_EQ(gets.size(), big_shards_);
  for (const auto& [shard, n] : gets) EXPECT_LE(n, 2) << shard << ": more than once an epoch";
  EXPECT_EQ(storage_->cache()->stats().uncacheable, 0u);
  EXPECT_LE(Metric(StorageMetrics(storage_).Collect(), "stoker_read_amplification"), 1.5);
}

TEST_F(S3JobTest, GlobalShuffleReadsRangedRecordsWhenTheDatasetIsTenTimesTheCache) {
  UseStorage(EnvKeys(), /*cache=*/false);
  const uint64_t dataset_bytes = PackSixteenShards();
  UseStorage(EnvKeys(), /*cache=*/true, dataset_bytes / 10, OpenShardLimits{3, 1 << 20});
  auto adjust = adjust_spec_;
  adjust_spec_ = [adjust](pb::JobSpec* spec) {
    adjust(spec);
    spec->set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  };
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  ASSERT_TRUE(Run("global", &seen).ok());
  ExpectExactlyOnce(seen);
  const auto families = StorageMetrics(storage_).Collect();
  const double amplification = Metric(families, "stoker_read_amplification");
  EXPECT_GT(amplification, 0.9);
  EXPECT_LE(amplification, 1.5);
  EXPECT_EQ(storage_->cache()->stats().misses, 0u) << "no whole-shard download";
}

TEST_F(S3JobTest, ProfileInACredentialsFile) {
  WriteFile(dir_.File("credentials"),
            absl::StrCat("[default]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = x\n"
                         "[training]\naws_access_key_id = ",
                         server_->options().access_key_id,
                         "\naws_secret_access_key = ", server_->options().secret_access_key, "\n"));
  RunCachedJob("profile",
               {{"AWS_SHARED_CREDENTIALS_FILE", dir_.File("credentials")},
                {"AWS_PROFILE", "training"},
                {"AWS_EC2_METADATA_DISABLED", "true"}},
               absl::ZeroDuration());
}

TEST_F(S3JobTest, ExpiringSessionTokensAreRefreshedMidJob) {
  // The container endpoint hands out keys that the server refuses after 1 s; the job, paced by
  // its consumer, opens shards for about 2.5 s.
  RunCachedJob(
      "session",
      {{"AWS_CONTAINER_CREDENTIALS_FULL_URI", server_->endpoint() + "/container-credentials"},
       {"AWS_CONTAINER_AUTHORIZATION_TOKEN", server_->options().container_token},
       {"AWS_EC2_METADATA_DISABLED", "true"}},
      absl::Milliseconds(200));
  EXPECT_GE(server_->CountRequests("GET", "/container-credentials 200"), 2);
}

TEST_F(S3JobTest, AWrongSecretIsPermissionDeniedAndNeverPrinted) {
  const std::string secret = "wrong-secret-must-not-leak-4f9a";
  Vars vars = EnvKeys();
  vars["AWS_SECRET_ACCESS_KEY"] = secret;
  UseStorage(vars, /*cache=*/true);
  // Capture everything this process logs while the job fails.
  const std::string log = dir_.File("stderr.log");
  const int saved = ::dup(2);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 2);
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  const absl::Status status = Run("wrong-secret", &seen);
  ::dup2(saved, 2);
  ::close(fd);
  ::close(saved);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(status.message(), HasSubstr(kManifest));
  EXPECT_THAT(status.message(), HasSubstr(server_->options().access_key_id));
  EXPECT_THAT(status.ToString(), Not(HasSubstr(secret)));
  EXPECT_THAT(ReadFile(log), Not(HasSubstr(secret)));
  EXPECT_THAT(server_->Output(), Not(HasSubstr(secret)));
  EXPECT_GE(server_->CountRequests("GET", "/data/ds/manifest.json 403"), 1);
}

TEST_F(S3JobTest, AMissingBucketIsNotFound) {
  UseStorage(EnvKeys(), /*cache=*/true);
  LoaderOptions options;
  options.coordinator_address = cluster_->coordinator_address();
  options.tls = cluster_->tls_for(Role::kTrainer);
  options.job_name = "no-bucket";
  options.spec = Spec();
  options.spec.mutable_dataset()->mutable_shards()->set_manifest(
      "s3://no-such-bucket/ds/manifest.json");
  auto loader = Loader::Open(std::move(options));
  ASSERT_FALSE(loader.ok());
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kNotFound) << loader.status();
  EXPECT_THAT(loader.status().message(), HasSubstr("no such bucket no-such-bucket"));
}

TEST_F(S3JobTest, TheServerStoppedMidEpochIsRetriedAndNothingIsLostOrRepeated) {
  UseStorage(EnvKeys(), /*cache=*/false);  // Every record is a ranged GET.
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  ASSERT_TRUE(Run("outage", &seen, absl::ZeroDuration(), [&](int n) {
                if (n != 3) return;
                server_->Stop();
                absl::SleepFor(absl::Milliseconds(800));
                ASSERT_TRUE(server_->Restart().ok());
              }).ok());
  ExpectExactlyOnce(seen);
}

TEST_F(S3JobTest, PacksFromABucketPrefixAndResumesThere) {
  UseStorage(EnvKeys(), /*cache=*/false);
  auto files = storage_->List(dir_.File("images"));
  ASSERT_TRUE(files.ok()) << files.status();
  for (const StorageEntry& file : *files) {
    const std::string bytes = ReadFile(file.location);
    const std::string key = file.location.substr(dir_.File("images/").size());
    ASSERT_TRUE(storage_
                    ->Write("s3://data/raw/" + key,
                            absl::Span<const uint8_t>(
                                reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()))
                    .ok());
  }
  PackOptions pack;
  pack.input = "s3://data/raw/";
  pack.output_dir = "s3://data/from-bucket";
  pack.shard_bytes = 32 * 1024;
  auto plan = PlanPack(*storage_, pack);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->class_names.size(), kClasses);
  PackCounters counters;
  auto first = Pack(*storage_, pack, *plan, &counters);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->images, kSamples);
  auto again = Pack(*storage_, pack, *plan, &counters);  // A rerun keeps every shard object.
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->shards_reused, again->shards);
  EXPECT_EQ(again->images, kSamples);
}

}  // namespace
}  // namespace stoker
