// stoker-pack --coco end to end: generated COCO sets and a hand-annotated photograph packed,
// read back through ShardSource and their targets decoded (DecodeStoredTargets), compared with
// what was drawn.

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/targets/target_codec.h"
#include "augment/targets/target_oracle.h"
#include "data/manifest.h"
#include "data/shard_source.h"
#include "data/storage_backend.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opencv2/imgcodecs.hpp"
#include "pack/coco_masks.h"
#include "pack/coco_scene_generator.h"
#include "pack/image_generator.h"
#include "pack/packer.h"

namespace stoker {
namespace {

using ::stoker::testing::ReadFile;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kCocoTestSeed = 3;
constexpr int kCocoTestWidth = 96;
constexpr int kCocoTestHeight = 64;

class CocoPackTest : public ::testing::Test {
 protected:
  absl::StatusOr<PackSummary> PackCoco(const std::string& instances, const std::string& images) {
    options_.coco = instances;
    options_.input = images;
    options_.output_dir = out_.File("shards");
    options_.shard_bytes = 20000;  // A few images a shard.
    options_.threads = 2;
    absl::StatusOr<PackPlan> plan = PlanPack(*storage_, options_);
    if (!plan.ok()) return plan.status();
    PackCounters counters;
    return Pack(*storage_, options_, *plan, &counters);
  }

  // The packed set as a source of the target fields.
  std::unique_ptr<Source> OpenPacked(const std::vector<std::string>& fields) {
    stoker::v1::DatasetSpec spec;
    spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
    absl::StatusOr<std::unique_ptr<Source>> source =
        CreateSource(spec, 0, DatasetIo::FromEnvironment(), false, fields);
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? *std::move(source) : nullptr;
  }

  const std::shared_ptr<Storage> storage_ = Storage::FromEnvironment();
  TempDir set_;
  TempDir out_;
  PackOptions options_;
};

// The stored targets of a sample read with fields boxes, box_labels, masks, keypoints.
absl::StatusOr<SampleTargets> DecodeCocoSample(const SampleBuffer& sample, uint32_t height,
                                               uint32_t width) {
  StoredTargetValues values;
  values.boxes = absl::MakeConstSpan(sample.fields[0]);
  values.box_labels = absl::MakeConstSpan(sample.fields[1]);
  values.masks = absl::MakeConstSpan(sample.fields[2]);
  values.keypoints = absl::MakeConstSpan(sample.fields[3]);
  return DecodeStoredTargets(values, height, width);
}

TEST_F(CocoPackTest, EveryImageKeepsExactlyTheBoxesAndMasksDrawn) {
  ASSERT_TRUE(WriteCocoSet({set_.path(), 10, kCocoTestWidth, kCocoTestHeight, kCocoTestSeed}).ok());
  absl::StatusOr<PackSummary> summary = PackCoco(set_.File("instances.json"), set_.path());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 10u);
  EXPECT_GT(summary->shards, 1u);
  auto manifest = ReadManifest(*storage_, options_.output_dir + "/manifest.json");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_THAT(manifest->fields(), ElementsAre("boxes", "box_labels", "masks", "keypoints"));
  EXPECT_THAT(manifest->class_names(),
              ElementsAre("", "box", "triangle", "slab", "", "", "", "disc"));

  std::unique_ptr<Source> source = OpenPacked({"boxes", "box_labels", "masks", "keypoints"});
  ASSERT_NE(source, nullptr);
  ASSERT_EQ(source->size(), 10u);
  std::set<int64_t> categories;
  size_t empty_images = 0;
  SampleBuffer sample;
  for (uint32_t i = 0; i < 10; ++i) {
    const CocoScene scene = GenerateCocoScene(kCocoTestSeed, i, kCocoTestWidth, kCocoTestHeight);
    ASSERT_TRUE(source->Read(i, &sample).ok()) << i;
    EXPECT_EQ(sample.label, -1);
    EXPECT_EQ(std::string(sample.encoded.begin(), sample.encoded.end()),
              ReadFile(set_.File(scene.file_name)));
    absl::StatusOr<SampleTargets> targets =
        DecodeCocoSample(sample, kCocoTestHeight, kCocoTestWidth);
    ASSERT_TRUE(targets.ok()) << targets.status();
    std::vector<float> boxes;
    std::vector<int64_t> labels;
    std::vector<uint8_t> masks;
    std::vector<float> centres;
    for (const CocoSceneObject& object : scene.objects) {
      boxes.insert(boxes.end(), object.box.begin(), object.box.end());
      labels.push_back(object.category_id);
      masks.insert(masks.end(), object.mask.begin(), object.mask.end());
      centres.push_back((object.box[0] + object.box[2]) / 2);
      centres.push_back((object.box[1] + object.box[3]) / 2);
      categories.insert(object.category_id);
    }
    empty_images += scene.objects.empty() ? 1 : 0;
    EXPECT_EQ(*targets->boxes, boxes) << i;
    EXPECT_EQ(*targets->box_labels, labels) << i;
    EXPECT_EQ(targets->masks->count, scene.objects.size()) << i;
    EXPECT_TRUE(targets->masks->pixels == masks) << "masks of image " << i;
    EXPECT_EQ(targets->keypoints->per_instance, 1u);
    EXPECT_EQ(targets->keypoints->xy, centres) << i;
  }
  // Every segmentation form and an image without annotations were exercised.
  EXPECT_THAT(categories, ElementsAre(1, 2, 3, 7));
  EXPECT_EQ(empty_images, 2u);  // Images 4 and 9.
  const absl::Status text = static_cast<ShardSource*>(source.get())->CheckField("text");
  EXPECT_EQ(text.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.message(), HasSubstr("carry only [boxes, box_labels, masks, keypoints]"));
}

TEST_F(CocoPackTest, AnImageOfAnotherSizeThanTheFileSaysStopsTheRunUnlisted) {
  std::vector<CocoScene> scenes;
  for (uint32_t i = 0; i < 3; ++i) {
    scenes.push_back(GenerateCocoScene(kCocoTestSeed, i, kCocoTestWidth, kCocoTestHeight));
  }
  ASSERT_TRUE(WriteCocoSet({set_.path(), 3, kCocoTestWidth, kCocoTestHeight, kCocoTestSeed}).ok());
  // The annotation file lies about image 3's size (its RLE masks would be refused for it first).
  scenes[2].width = kCocoTestWidth + 4;
  scenes[2].objects.clear();
  WriteFile(set_.File("lying.json"), CocoInstancesJson(scenes));
  const absl::Status status = PackCoco(set_.File("lying.json"), set_.path()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("lying.json: images[2] (id 3): its image decodes to 96x64, not the 100x64 "
                        "the file says"));
  EXPECT_FALSE(std::filesystem::exists(options_.output_dir + "/manifest.json"));

  options_.captions = true;
  EXPECT_THAT(PlanPack(*storage_, options_).status().message(),
              HasSubstr("coco: give it or captions, not both"));
}

TEST_F(CocoPackTest, AnImageWhoseTargetsAWorkerWouldRefuseIsSkippedAsTooLarge) {
  // Vertical stripes one pixel wide over 1024x1024 are 2^20 row-major runs of one pixel: 4 MiB
  // and 16 bytes stored, over a typed target's 4 MiB (kMaxStoredTargetValueBytes).
  std::vector<uint8_t> stripes(1024 * 1024);
  for (size_t i = 0; i < stripes.size(); ++i) stripes[i] = i % 2;
  const std::string counts = EncodeCocoRleString(MaskToCocoRle(stripes, 1024, 1024));
  std::filesystem::create_directories(set_.File("images"));
  for (const char* name : {"images/board.png", "images/plain.png"}) {
    ASSERT_TRUE(cv::imwrite(set_.File(name), GenerateNaturalImage(1, 0, 0, 1024, 1024)));
  }
  ASSERT_EQ(counts.find('\\'), std::string::npos);  // Written into JSON as it is.
  WriteFile(set_.File("board.json"),
            absl::StrCat(R"({"images": [{"id": 1, "file_name": "images/board.png", "width": 1024,
                                          "height": 1024},
                                         {"id": 2, "file_name": "images/plain.png", "width": 1024,
                                          "height": 1024}],
                             "categories": [{"id": 1, "name": "board"}],
                             "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
                                              "bbox": [0, 0, 1024, 1024],
                                              "segmentation": {"size": [1024, 1024],
                                                               "counts": ")",
                         counts, R"("}}]})"));
  absl::StatusOr<PackSummary> summary = PackCoco(set_.File("board.json"), set_.path());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 1u);
  ASSERT_EQ(summary->skipped_inputs.size(), 1u);
  EXPECT_EQ(summary->skipped_inputs[0].reason, "too_large");
  EXPECT_THAT(summary->skipped_inputs[0].message, HasSubstr("a \"masks\" field of "));
  EXPECT_THAT(summary->skipped_inputs[0].path, HasSubstr("board.png"));
}

TEST_F(CocoPackTest, ChelseaKeepsTheCatFaceAnnotatedByHand) {
  const std::string photos = STOKER_SKIMAGE_DATA_DIR;
  if (!std::filesystem::exists(photos + "/chelsea.png")) {
    GTEST_SKIP() << "skimage's chelsea.png is not installed (python3-skimage)";
  }
  const auto& [x1, y1, x2, y2] = kChelseaFace;
  WriteFile(
      set_.File("chelsea.json"),
      absl::StrCat(R"({"images": [{"id": 1, "file_name": "chelsea.png", "width": 451,
                                          "height": 300}],
                             "categories": [{"id": 17, "name": "cat"}],
                             "annotations": [{"id": 1, "image_id": 1, "category_id": 17,
                                              "iscrowd": 0, "bbox": [)",
                   x1, ", ", y1, ", ", x2 - x1, ", ", y2 - y1, "], \"segmentation\": [[", x1, ", ",
                   y1, ", ", x2, ", ", y1, ", ", x2, ", ", y2, ", ", x1, ", ", y2, "]]}]}"));
  absl::StatusOr<PackSummary> summary = PackCoco(set_.File("chelsea.json"), photos);
  ASSERT_TRUE(summary.ok()) << summary.status();
  std::unique_ptr<Source> source = OpenPacked({"boxes", "box_labels", "masks"});
  ASSERT_NE(source, nullptr);
  SampleBuffer sample;
  ASSERT_TRUE(source->Read(0, &sample).ok());
  EXPECT_EQ(std::string(sample.encoded.begin(), sample.encoded.end()),
            ReadFile(photos + "/chelsea.png"));
  StoredTargetValues values;
  values.boxes = absl::MakeConstSpan(sample.fields[0]);
  values.box_labels = absl::MakeConstSpan(sample.fields[1]);
  values.masks = absl::MakeConstSpan(sample.fields[2]);
  absl::StatusOr<SampleTargets> targets = DecodeStoredTargets(values, 300, 451);
  ASSERT_TRUE(targets.ok()) << targets.status();
  EXPECT_THAT(*targets->boxes, ElementsAre(x1, y1, x2, y2));
  EXPECT_THAT(*targets->box_labels, ElementsAre(17));
  // The polygon of the box's corners fills exactly the box's pixels.
  for (uint32_t y = 0; y < 300; ++y) {
    for (uint32_t x = 0; x < 451; ++x) {
      const bool inside = x >= x1 && x < x2 && y >= y1 && y < y2;
      ASSERT_EQ(targets->masks->pixels[y * 451 + x], inside ? 1 : 0) << x << ", " << y;
    }
  }
}

}  // namespace
}  // namespace stoker
