// Image-text jobs end to end (JobSpec.fields): a generated WebDataset shard set (.jpg, .txt,
// .json, .cls; captions with multi-byte UTF-8) → coordinator and workers → trainer clients. Every
// sample arrives once per epoch with its label, caption and JSON byte for byte, also through
// compression and the client's tail; a sample without its caption is replaced and counted;
// OpenJob refuses fields it cannot serve, naming them.

#include <map>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "augment/pipeline_text.h"
#include "data/dataset_io.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pack/image_generator.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/hybrid/hybrid_producer.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::stoker::testing::TarEntry;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteTar;
using ::testing::HasSubstr;

constexpr uint64_t kShards = 3;
constexpr uint64_t kPerShard = 8;  // 24 samples.
constexpr uint64_t kSamples = kShards * kPerShard;
constexpr uint32_t kFieldsBatch = 4;
constexpr uint64_t kNoCaption = 13;  // The sample MissingCaption's set lacks a .txt for.

std::string Caption(uint64_t i) {
  // Multi-byte UTF-8 (2, 3 and 4 bytes) and a length that varies with the sample.
  return absl::StrCat("photo n\xc2\xb0", i, " \xe2\x80\x94 caf\xc3\xa9 \xf0\x9f\x90\x88 ",
                      std::string(i % 5, '+'));
}

std::string Json(uint64_t i) {
  return absl::StrCat("{\"id\": ", i, ", \"url\": \"https://example.com/", i, ".jpg\"}");
}

int64_t Label(uint64_t i) { return static_cast<int64_t>(i % 3); }

// Writes the shard set: shard s holds samples s*8..s*8+7 as keys "s<i>"; in shard 1 each
// sample's caption and JSON come before its image. Without `with_caption(i)`, no .txt.
std::vector<std::string> WriteImageTextTars(const TempDir& dir, bool drop_one_caption) {
  std::vector<std::string> paths;
  for (uint64_t s = 0; s < kShards; ++s) {
    std::vector<TarEntry> entries;
    for (uint64_t i = s * kPerShard; i < (s + 1) * kPerShard; ++i) {
      std::vector<uchar> jpeg;
      EXPECT_TRUE(cv::imencode(".jpg", GenerateNaturalImage(1, 0, i, 48, 40), jpeg));
      const std::string key = absl::StrFormat("s%03d", i);
      std::vector<TarEntry> sample;
      if (!(drop_one_caption && i == kNoCaption)) sample.push_back({key + ".txt", Caption(i)});
      sample.push_back({key + ".json", Json(i)});
      sample.push_back({key + ".cls", absl::StrCat(Label(i))});
      TarEntry image{key + ".jpg", std::string(jpeg.begin(), jpeg.end())};
      if (s == 1) {
        sample.push_back(image);
      } else {
        sample.insert(sample.begin(), image);
      }
      entries.insert(entries.end(), sample.begin(), sample.end());
    }
    paths.push_back(dir.File(absl::StrCat("train-", s, ".tar")));
    WriteTar(paths.back(), entries);
  }
  return paths;
}

class FieldsJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Start(2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  pb::JobSpec Spec(const std::vector<std::string>& paths, uint32_t world_size,
                   uint32_t epochs) const {
    pb::JobSpec spec;
    for (const std::string& path : paths) spec.mutable_dataset()->mutable_shards()->add_paths(path);
    *spec.mutable_pipeline() = *ParsePipelineText(
        "decode, random_resized_crop(height=16, width=16), horizontal_flip, to_float, "
        "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])");
    spec.set_batch_size(kFieldsBatch);
    spec.set_seed(3);
    spec.set_world_size(world_size);
    spec.set_epochs(epochs);
    spec.set_drop_last(true);
    spec.set_tail(pb::TAIL_PLACEMENT_WORKER);
    for (const char* field : {"image", "label", "text", "json"}) spec.add_fields(field);
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
    return options;
  }

  TempDir dir_;
  std::unique_ptr<TestCluster> cluster_;
};

std::string Value(const Batch& batch, int column, size_t i) {
  const absl::Span<const uint8_t> value = batch.field_value(static_cast<size_t>(column), i);
  return std::string(value.begin(), value.end());
}

// (epoch → sample → times seen) over every batch of one rank; checks each sample's label,
// caption and JSON against what was packed.
absl::Status Consume(LoaderOptions options, std::map<uint32_t, std::map<uint64_t, int>>* seen) {
  LoaderEnv env;
  env.tail = ClientTailFactory();
  auto loader = Loader::Open(std::move(options), std::move(env));
  if (!loader.ok()) return loader.status();
  return DrainLoader(**loader, [&](Batch& batch) {
    EXPECT_EQ(batch.size_bytes(), (*loader)->batch_bytes());
    const int text = batch.FindField("text"), json = batch.FindField("json");
    EXPECT_EQ(batch.num_fields(), 2u);
    EXPECT_EQ(text, 0);
    EXPECT_EQ(json, 1);
    for (size_t i = 0; i < batch.num_samples(); ++i) {
      const uint64_t sample = batch.sample_indices()[i];
      EXPECT_EQ(batch.labels()[i], Label(sample)) << sample;
      EXPECT_EQ(Value(batch, text, i), Caption(sample)) << sample;
      EXPECT_EQ(Value(batch, json, i), Json(sample)) << sample;
      ++(*seen)[batch.epoch()][sample];
    }
    return absl::OkStatus();
  });
}

TEST_F(FieldsJobTest, TwoRanksGetEverySampleOnceWithItsCaptionAndJson) {
  const pb::JobSpec spec = Spec(WriteImageTextTars(dir_, false), 2, 2);
  std::map<uint32_t, std::map<uint64_t, int>> seen[2];
  absl::Status status[2];
  std::vector<std::thread> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] { status[r] = Consume(Options("captions", spec, r), &seen[r]); });
  }
  for (std::thread& t : ranks) t.join();
  ASSERT_TRUE(status[0].ok()) << status[0];
  ASSERT_TRUE(status[1].ok()) << status[1];
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    std::map<uint64_t, int> both = seen[0][epoch];
    for (const auto& [sample, n] : seen[1][epoch]) both[sample] += n;
    ASSERT_EQ(both.size(), kSamples) << "epoch " << epoch;
    for (const auto& [sample, n] : both) EXPECT_EQ(n, 1) << "sample " << sample;
  }
}

// The fields ride in the payload: compressed streams and the client's tail carry them too.
TEST_F(FieldsJobTest, CompressionAndTheClientTailCarryTheFields) {
  pb::JobSpec spec = Spec(WriteImageTextTars(dir_, false), 1, 1);
  spec.set_tail(pb::TAIL_PLACEMENT_CLIENT);
  LoaderOptions options = Options("captions-lz4-tail", spec, 0);
  options.compression = "lz4";
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  ASSERT_TRUE(Consume(std::move(options), &seen).ok());
  ASSERT_EQ(seen[0].size(), kSamples);
  for (const auto& [sample, n] : seen[0]) EXPECT_EQ(n, 1) << "sample " << sample;
}

TEST_F(FieldsJobTest, ASampleWithoutItsCaptionIsReplaced) {
  pb::JobSpec spec = Spec(WriteImageTextTars(dir_, true), 1, 1);
  spec.set_max_bad_sample_fraction(0.1);
  LoaderOptions options = Options("one-caption-missing", spec, 0);
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  ASSERT_TRUE(Consume(std::move(options), &seen).ok());
  EXPECT_EQ(seen[0].count(kNoCaption), 0u);
  int delivered = 0;
  for (const auto& [sample, n] : seen[0]) delivered += n;
  EXPECT_EQ(delivered, static_cast<int>(kSamples));  // Replaced: the batch count stays.
}

// Hybrid mode: the trainer's own producer (the worker's batch producer inside the trainer) and no
// remote worker delivers the fields too.
TEST(FieldsHybridTest, TheTrainersOwnProducerCarriesTheFields) {
  TestClusterOptions cluster_options;
  cluster_options.workers = 0;
  cluster_options.insecure = true;  // Hybrid mode runs only without TLS (docs/security.md).
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(cluster_options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  TempDir dir;
  pb::JobSpec spec;
  for (const std::string& path : WriteImageTextTars(dir, false)) {
    spec.mutable_dataset()->mutable_shards()->add_paths(path);
  }
  *spec.mutable_pipeline() = *ParsePipelineText("decode, resize(height=16, width=16), to_float");
  spec.set_batch_size(kFieldsBatch);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  for (const char* field : {"image", "text", "json"}) spec.add_fields(field);
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = TlsConfig::Plaintext();
  options.job_name = "captions-hybrid";
  options.spec = spec;
  options.client_id = "trainer-hybrid";
  options.heartbeat_interval = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<HybridProducer>> local =
      HybridProducer::Start(options.coordinator_address, options.client_id, 2,
                            TlsConfig::Plaintext(), DatasetIo::FromEnvironment());
  ASSERT_TRUE(local.ok()) << local.status();
  std::map<uint32_t, std::map<uint64_t, int>> seen;
  ASSERT_TRUE(Consume(std::move(options), &seen).ok());
  ASSERT_EQ(seen[0].size(), kSamples);
  for (const auto& [sample, n] : seen[0]) EXPECT_EQ(n, 1) << "sample " << sample;
}

TEST_F(FieldsJobTest, OpenJobRefusesFieldsItCannotServeNamingThem) {
  pb::JobSpec spec = Spec(WriteImageTextTars(dir_, false), 1, 1);
  spec.add_fields("boxes");
  auto loader = Loader::Open(Options("boxes", spec, 0));
  ASSERT_FALSE(loader.ok());
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loader.status().message(),
              HasSubstr("spec.fields[4]: \"boxes\": the dataset has WebDataset shards; typed "
                        "targets come from stoker shards"));

  spec = Spec(WriteImageTextTars(dir_, false), 1, 1);
  spec.set_fields(3, "text");
  loader = Loader::Open(Options("twice", spec, 0));
  ASSERT_FALSE(loader.ok());
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loader.status().message(), HasSubstr("spec.fields[3]: \"text\" is named twice"));
}

}  // namespace
}  // namespace stoker
