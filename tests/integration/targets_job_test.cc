// Detection jobs end to end (typed targets, docs/decisions/0068-typed-targets-on-the-wire.md):
// stoker shards whose records carry boxes, box labels and masks → coordinator and workers →
// trainer clients. The pipeline flips every image and doubles its size, so each sample's moved
// boxes and masks are exact; they arrive through compression and the client's tail, and from
// the trainer's own (hybrid) producer.

#include <array>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "augment/targets/target_codec.h"
#include "data/dataset_io.h"
#include "data/record_fields.h"
#include "data/shard_writer.h"
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
using ::stoker::testing::TempDir;
using ::testing::ElementsAreArray;

constexpr uint64_t kTargetShards = 2;
constexpr uint64_t kScenesPerShard = 8;
constexpr uint64_t kScenes = kTargetShards * kScenesPerShard;
constexpr int kSceneRows = 24;
constexpr int kSceneCols = 32;

// Scene i's boxes: 1 to 3 integer rectangles inside its 24x32 image.
std::vector<std::array<float, 4>> SceneRects(uint64_t i) {
  std::vector<std::array<float, 4>> rects;
  for (uint64_t b = 0; b <= i % 3; ++b) {
    const float x1 = static_cast<float>(1 + (i + 3 * b) % 20);
    const float y1 = static_cast<float>(1 + (i + b) % 12);
    rects.push_back({x1, y1, x1 + 8 + static_cast<float>(b), y1 + 9});
  }
  return rects;
}

// Instance masks of `rects` (XYXY integer pixels) on a rows x cols image.
std::vector<uint8_t> RectMasks(const std::vector<std::array<float, 4>>& rects, int rows, int cols) {
  std::vector<uint8_t> masks(rects.size() * rows * cols, 0);
  for (size_t m = 0; m < rects.size(); ++m) {
    for (int y = static_cast<int>(rects[m][1]); y < static_cast<int>(rects[m][3]); ++y) {
      for (int x = static_cast<int>(rects[m][0]); x < static_cast<int>(rects[m][2]); ++x) {
        masks[(m * rows + y) * cols + x] = 1;
      }
    }
  }
  return masks;
}

// After a flip (x -> W - x) and a 2x resize.
std::vector<std::array<float, 4>> MovedRects(uint64_t i) {
  std::vector<std::array<float, 4>> moved;
  for (const auto& [x1, y1, x2, y2] : SceneRects(i)) {
    moved.push_back({2 * (kSceneCols - x2), 2 * y1, 2 * (kSceneCols - x1), 2 * y2});
  }
  return moved;
}

// kTargetShards stoker shards of JPEG scenes whose records carry their stored targets.
std::vector<std::string> WriteSceneShards(const TempDir& dir) {
  std::vector<std::string> paths;
  for (uint64_t s = 0; s < kTargetShards; ++s) {
    paths.push_back(dir.File(absl::StrCat("scenes-", s, ".stoker")));
    auto writer = ShardWriter::Create(paths.back());
    EXPECT_TRUE(writer.ok()) << writer.status();
    for (uint64_t i = s * kScenesPerShard; i < (s + 1) * kScenesPerShard; ++i) {
      std::vector<uchar> jpeg;
      EXPECT_TRUE(
          cv::imencode(".jpg", GenerateNaturalImage(1, 0, i, kSceneCols, kSceneRows), jpeg));
      SampleTargets targets;
      targets.canvas_height = kSceneRows;
      targets.canvas_width = kSceneCols;
      const std::vector<std::array<float, 4>> rects = SceneRects(i);
      targets.boxes.emplace();
      targets.box_labels.emplace();
      for (size_t b = 0; b < rects.size(); ++b) {
        targets.boxes->insert(targets.boxes->end(), rects[b].begin(), rects[b].end());
        targets.box_labels->push_back(static_cast<int64_t>(10 * i + b));
      }
      targets.masks = TargetMasks{static_cast<uint32_t>(rects.size()), kSceneRows, kSceneCols,
                                  RectMasks(rects, kSceneRows, kSceneCols)};
      auto fields = EncodeStoredTargets(targets);
      EXPECT_TRUE(fields.ok()) << fields.status();
      auto metadata = EncodeRecordFields(*fields);
      EXPECT_TRUE(metadata.ok()) << metadata.status();
      EXPECT_TRUE((*writer)->Add(absl::StrCat("scene/", i), 0, jpeg, *metadata).ok());
    }
    EXPECT_TRUE((*writer)->Finish().ok());
  }
  return paths;
}

pb::JobSpec SceneSpec(const std::vector<std::string>& paths) {
  pb::JobSpec spec;
  for (const std::string& path : paths) spec.mutable_dataset()->mutable_shards()->add_paths(path);
  *spec.mutable_pipeline() = *ParsePipelineText(absl::StrCat(
      "decode, horizontal_flip(p=1), resize(height=", 2 * kSceneRows, ", width=", 2 * kSceneCols,
      "), to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"));
  spec.set_batch_size(4);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  for (const char* field : {"image", "boxes", "box_labels", "masks"}) spec.add_fields(field);
  return spec;
}

// Drains one rank, checking each sample's moved targets; returns sample → times seen.
absl::Status ConsumeScenes(LoaderOptions options, std::map<uint64_t, int>* seen) {
  LoaderEnv env;
  env.tail = ClientTailFactory();
  auto loader = Loader::Open(std::move(options), std::move(env));
  if (!loader.ok()) return loader.status();
  return DrainLoader(**loader, [&](Batch& batch) {
    for (size_t i = 0; i < batch.num_samples(); ++i) {
      const uint64_t scene = batch.sample_indices()[i];
      std::vector<float> boxes;
      std::vector<int64_t> labels;
      const std::vector<std::array<float, 4>> moved = MovedRects(scene);
      for (size_t b = 0; b < moved.size(); ++b) {
        boxes.insert(boxes.end(), moved[b].begin(), moved[b].end());
        labels.push_back(static_cast<int64_t>(10 * scene + b));
      }
      EXPECT_THAT(batch.boxes(i), ElementsAreArray(boxes)) << "scene " << scene;
      EXPECT_THAT(batch.box_labels(i), ElementsAreArray(labels)) << "scene " << scene;
      EXPECT_THAT(batch.masks(i),
                  ElementsAreArray(RectMasks(moved, 2 * kSceneRows, 2 * kSceneCols)))
          << "scene " << scene;
      ++(*seen)[scene];
    }
    return absl::OkStatus();
  });
}

// Typed columns ride in the payload: lz4 streams and the client's tail carry them unchanged.
TEST(TargetsJobTest, CompressionAndTheClientTailCarryMovedTargets) {
  auto cluster = TestCluster::Start(2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  TempDir dir;
  pb::JobSpec spec = SceneSpec(WriteSceneShards(dir));
  spec.set_tail(pb::TAIL_PLACEMENT_CLIENT);
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = (*cluster)->tls_for(Role::kTrainer);
  options.job_name = "scenes-lz4-tail";
  options.spec = spec;
  options.compression = "lz4";
  options.heartbeat_interval = absl::Milliseconds(50);
  std::map<uint64_t, int> seen;
  ASSERT_TRUE(ConsumeScenes(std::move(options), &seen).ok());
  ASSERT_EQ(seen.size(), kScenes);
  for (const auto& [scene, n] : seen) EXPECT_EQ(n, 1) << "scene " << scene;
}

// Hybrid mode: the trainer's own producer, with no remote worker, moves the targets too.
TEST(TargetsJobTest, TheTrainersOwnProducerMovesTheTargets) {
  TestClusterOptions cluster_options;
  cluster_options.workers = 0;
  cluster_options.insecure = true;  // Hybrid mode runs only without TLS (docs/security.md).
  auto cluster = TestCluster::Start(cluster_options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  TempDir dir;
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = TlsConfig::Plaintext();
  options.job_name = "scenes-hybrid";
  options.spec = SceneSpec(WriteSceneShards(dir));
  options.client_id = "trainer-scenes-hybrid";
  options.heartbeat_interval = absl::Milliseconds(50);
  auto local = HybridProducer::Start(options.coordinator_address, options.client_id, 2,
                                     TlsConfig::Plaintext(), DatasetIo::FromEnvironment());
  ASSERT_TRUE(local.ok()) << local.status();
  std::map<uint64_t, int> seen;
  ASSERT_TRUE(ConsumeScenes(std::move(options), &seen).ok());
  ASSERT_EQ(seen.size(), kScenes);
  for (const auto& [scene, n] : seen) EXPECT_EQ(n, 1) << "scene " << scene;
}

}  // namespace
}  // namespace stoker
