// Typed targets through the batch producer: decoded from a sample's stored values on the encoded
// image's canvas, moved with the image (a horizontal flip and a 2x resize, whose moves are exact)
// and carried in their wire form; a bad annotation replaced and counted; jobs refused when their
// pipeline cannot move targets.

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/synthetic_images.h"
#include "augment/targets/target_codec.h"
#include "augment/testing/spec_from_text.h"
#include "common/bad_sample.h"
#include "common/field_limits.h"
#include "data/dataset_io.h"
#include "data/record_fields.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/batch_check.h"
#include "worker/bad_sample_counters.h"
#include "worker/batch_producer.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using worker_testing::TaskOf;

constexpr uint32_t kSceneHeight = 16;
constexpr uint32_t kSceneWidth = 24;

// Sample i's one box, XYXY pixels of its 16x24 image: an integer rectangle, so that a flip and
// a 2x resize move it (and its mask) exactly.
std::array<uint32_t, 4> SceneBox(uint64_t i) {
  const uint32_t x1 = static_cast<uint32_t>(i % 5);
  return {x1, 2 + static_cast<uint32_t>(i % 3), x1 + 7, 11};
}

// Sample i's one instance's keypoints, COCO-style: one inside its box (visible), one
// unlabelled at (0, 0) (visibility 0), one on the last pixel (labelled, not visible) that a
// crop leaves outside its window.
TargetKeypoints SceneKeypoints(uint64_t i) {
  const std::array<uint32_t, 4> box = SceneBox(i);
  TargetKeypoints keypoints;
  keypoints.count = 1;
  keypoints.per_instance = 3;
  keypoints.xy = {box[0] + 0.5f, box[1] + 1.25f, 0, 0, kSceneWidth - 1, kSceneHeight - 1};
  keypoints.visibility = {2, 0, 1};
  return keypoints;
}

// The ways a record's stored targets can be bad at run time (what stoker-pack refuses, written
// by another tool), and the reason a worker counts each under.
enum class BadTargets {
  kBoxOutside,
  kRaggedBoxes,
  kMasksOfAnotherSize,
  kLabelsNotOnePerBox,
  kMasksCountOverTheBound
};
struct BadTargetsCase {
  BadTargets kind;
  const char* reason;   // stoker_samples_skipped_total's label
  const char* message;  // in the worker's log line
};

// Sample `index`'s stored values, corrupted as `kind` says.
void Corrupt(BadTargets kind, std::vector<std::pair<std::string, std::string>>* stored) {
  auto value = [&](absl::string_view name) -> std::string& {
    for (auto& [field, bytes] : *stored) {
      if (field == name) return bytes;
    }
    std::abort();
  };
  switch (kind) {
    case BadTargets::kBoxOutside: {
      const std::array<float, 4> box = {0, 0, 30, 10};  // x2 past 24.
      value(kBoxesField).assign(reinterpret_cast<const char*>(box.data()), 16);
      break;
    }
    case BadTargets::kRaggedBoxes:
      value(kBoxesField).resize(12);
      break;
    case BadTargets::kMasksOfAnotherSize:
      value(kMasksField)[4] = static_cast<char>(kSceneHeight + 1);  // u32 height, low byte
      break;
    case BadTargets::kLabelsNotOnePerBox:
      value(kBoxLabelsField).append(8, '\0');
      break;
    case BadTargets::kMasksCountOverTheBound:
      value(kMasksField)[0] = static_cast<char>(kMaxTargetInstances + 1);  // u32 count
      break;
  }
}

// JPEG images of 16x24 with stored targets: the box, its label (i + 1) and its mask; the
// indices in `bad` corrupted as it says.
class TargetSource : public Source {
 public:
  TargetSource(uint64_t n, std::map<uint64_t, BadTargets> bad) : n_(n), bad_(std::move(bad)) {}
  uint64_t size() const override { return n_; }
  InputFormat format() const override { return InputFormat::Encoded(); }
  absl::Status Read(uint64_t index, SampleBuffer* sample) const override {
    std::vector<uint8_t> pixels = NaturalImage(kSceneHeight, kSceneWidth, 3, index);
    sample->encoded =
        EncodeJpeg(ImageView{pixels.data(), {kSceneHeight, kSceneWidth, 3, PixelType::kUint8}}, 90);
    sample->label = 0;
    const std::array<uint32_t, 4> box = SceneBox(index);
    SampleTargets targets;
    targets.canvas_height = kSceneHeight;
    targets.canvas_width = kSceneWidth;
    targets.boxes = std::vector<float>(box.begin(), box.end());
    targets.box_labels = std::vector<int64_t>{static_cast<int64_t>(index + 1)};
    TargetMasks masks;
    masks.count = 1;
    masks.height = kSceneHeight;
    masks.width = kSceneWidth;
    masks.pixels.assign(kSceneHeight * kSceneWidth, 0);
    for (uint32_t y = box[1]; y < box[3]; ++y) {
      for (uint32_t x = box[0]; x < box[2]; ++x) masks.pixels[y * kSceneWidth + x] = 1;
    }
    targets.masks = std::move(masks);
    targets.keypoints = SceneKeypoints(index);
    absl::StatusOr<std::vector<std::pair<std::string, std::string>>> stored =
        EncodeStoredTargets(targets);
    if (!stored.ok()) return stored.status();
    if (auto it = bad_.find(index); it != bad_.end()) Corrupt(it->second, &*stored);
    sample->fields.clear();
    for (const std::string& field : fields_) {
      for (const auto& [name, value] : *stored) {
        if (name == field) sample->fields.emplace_back(value.begin(), value.end());
      }
    }
    return absl::OkStatus();
  }
  std::string Locate(uint64_t index) const override { return absl::StrCat("scene ", index); }
  absl::Status CheckField(absl::string_view) const override { return absl::OkStatus(); }
  uint64_t fingerprint() const override { return 0x5ce7e; }  // for the decoded cache
  void set_fields(std::vector<std::string> fields) { fields_ = std::move(fields); }

 private:
  uint64_t n_;
  std::map<uint64_t, BadTargets> bad_;
  std::vector<std::string> fields_;
};

pb::JobSpec SceneJob(std::initializer_list<const char*> fields) {
  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_synthetic();  // Unused: the source is injected.
  spec.set_batch_size(4);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.mutable_pipeline()->add_ops()->mutable_decode();
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip()->set_p(1);
  pb::ResizeOp* resize = spec.mutable_pipeline()->add_ops()->mutable_resize();
  resize->set_height(2 * kSceneHeight);
  resize->set_width(2 * kSceneWidth);
  for (const char* field : fields) spec.add_fields(field);
  return spec;
}

absl::StatusOr<std::shared_ptr<JobContext>> SceneContext(const pb::JobSpec& spec,
                                                         std::map<uint64_t, BadTargets> bad = {}) {
  auto source = std::make_unique<TargetSource>(8, std::move(bad));
  std::vector<std::string> fields;
  for (const std::string& field : spec.fields()) {
    if (field != kImageField && field != kLabelField) fields.push_back(field);
  }
  source->set_fields(std::move(fields));
  return JobContext::Create(1, spec, std::move(source));
}

std::string ColumnValue(const pb::BatchMessage& batch, int column, int i) {
  const auto& offsets = batch.header().fields(column).offsets();
  return batch.data().substr(offsets.Get(i), offsets.Get(i + 1) - offsets.Get(i));
}

template <typename T>
std::vector<T> ValuesOf(const std::string& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// The box of sample i flipped (x -> 24 - x) and scaled by 2.
std::vector<float> MovedBox(uint64_t i) {
  const std::array<uint32_t, 4> box = SceneBox(i);
  return {2.0f * (kSceneWidth - box[2]), 2.0f * box[1], 2.0f * (kSceneWidth - box[0]),
          2.0f * box[3]};
}

// A job with the decoded cache on: the prefix (decode, resize) is cached and its moves replayed
// from sizes; the flip runs on each sample. Image and targets are the same bytes cold, warm and
// without a cache.
TEST(BatchTargetsTest, TargetsMoveTheSameWithTheDecodedCache) {
  pb::JobSpec spec = SceneJob({"image", "boxes", "box_labels", "masks", "keypoints"});
  spec.mutable_pipeline()->mutable_ops()->SwapElements(1, 2);  // decode, resize, flip
  spec.set_decoded_cache(pb::DECODED_CACHE_ALWAYS);
  auto job = SceneContext(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*job)->uses_decoded_cache());
  ASSERT_EQ((*job)->pipeline().prefix_ops(), 2u);
  DecodedCache cache(16 << 20, DecodedCacheCompression::kNone);
  for (uint64_t b = 0; b < 2; ++b) {
    ProducerScratch scratch;
    pb::BatchMessage expected, cold, warm;
    ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, b), 1, &scratch, &expected).ok());
    ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, b), 1, &scratch, &cold, nullptr, &cache).ok());
    ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, b), 1, &scratch, &warm, nullptr, &cache).ok());
    EXPECT_EQ(cold.data(), expected.data()) << "batch " << b;
    EXPECT_EQ(warm.data(), expected.data()) << "batch " << b;
  }
  EXPECT_EQ(cache.stats().hits, 8u);
  EXPECT_EQ(cache.stats().misses, 8u);
}

TEST(BatchTargetsTest, BoxesLabelsAndMasksMoveWithTheImage) {
  auto job = SceneContext(SceneJob({"image", "boxes", "box_labels", "masks"}));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE((*job)->has_targets());
  ProducerScratch scratch;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 1), 1, &scratch, &batch).ok());
  ASSERT_TRUE(CheckBatchHeader(batch.header(), batch.data().size()).ok());
  ASSERT_EQ(batch.header().fields_size(), 3);
  EXPECT_EQ(batch.header().fields(0).name(), "boxes");
  constexpr uint32_t kOutH = 2 * kSceneHeight, kOutW = 2 * kSceneWidth;
  for (int i = 0; i < 4; ++i) {
    const uint64_t index = 4 + i;
    EXPECT_THAT(ValuesOf<float>(ColumnValue(batch, 0, i)), ElementsAreArray(MovedBox(index)))
        << "sample " << index;
    EXPECT_THAT(ValuesOf<int64_t>(ColumnValue(batch, 1, i)),
                ElementsAre(static_cast<int64_t>(index + 1)));
    const std::string mask = ColumnValue(batch, 2, i);
    ASSERT_EQ(mask.size(), kOutH * kOutW);
    const std::vector<float> box = MovedBox(index);
    for (uint32_t y = 0; y < kOutH; ++y) {
      for (uint32_t x = 0; x < kOutW; ++x) {
        const bool inside = x >= box[0] && x < box[2] && y >= box[1] && y < box[3];
        ASSERT_EQ(mask[y * kOutW + x], inside ? 1 : 0)
            << "sample " << index << " at " << y << "," << x;
      }
    }
  }
}

// One geometric step as torchvision.transforms.v2's keypoint kernels take it
// (v2/functional/_geometry.py): horizontal_flip_keypoints x -> W - 1 - x, crop_keypoints
// x -> x - left (no clamping), resize_keypoints x -> x * float32(W' / W).
struct V2KeypointStep {
  enum Kind { kFlip, kVerticalFlip, kCrop, kResize } kind;
  float a;  // kFlip: the canvas width; kVerticalFlip: its height; kCrop: top; kResize: W' / W
  float b;  // kCrop: left; kResize: H' / H
};
struct KeypointPipelineCase {
  const char* pipeline;
  std::vector<V2KeypointStep> steps;
};

// Sample i's keypoints after `steps`, as the wire carries them: x, y, visibility per keypoint.
std::vector<float> V2MovedKeypoints(uint64_t i, const std::vector<V2KeypointStep>& steps) {
  const TargetKeypoints keypoints = SceneKeypoints(i);
  std::vector<float> out;
  for (uint32_t k = 0; k < keypoints.per_instance; ++k) {
    float x = keypoints.xy[2 * k], y = keypoints.xy[2 * k + 1];
    for (const V2KeypointStep& step : steps) {
      switch (step.kind) {
        case V2KeypointStep::kFlip:
          x = step.a - 1 - x;
          break;
        case V2KeypointStep::kVerticalFlip:
          y = step.a - 1 - y;
          break;
        case V2KeypointStep::kCrop:
          y -= step.a;
          x -= step.b;
          break;
        case V2KeypointStep::kResize:
          x *= step.a;
          y *= step.b;
          break;
      }
    }
    out.insert(out.end(), {x, y, static_cast<float>(keypoints.visibility[k])});
  }
  return out;
}

class KeypointPipelineTest : public ::testing::TestWithParam<KeypointPipelineCase> {};

// A job that names only "keypoints": flips, centre crops and resizes on the worker move each
// keypoint exactly as v2 does; the visibility is kept, and the keypoint the crop leaves outside
// its window keeps its (outside) coordinates, as v2 keeps them.
TEST_P(KeypointPipelineTest, KeypointsMoveAsTorchvisionV2MovesThem) {
  pb::JobSpec spec = SceneJob({"image", "keypoints"});
  *spec.mutable_pipeline() = SpecFromText(GetParam().pipeline);
  auto job = SceneContext(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 1), 1, &scratch, &batch).ok());
  ASSERT_TRUE(CheckBatchHeader(batch.header(), batch.data().size()).ok());
  ASSERT_EQ(batch.header().fields_size(), 1);
  EXPECT_EQ(batch.header().fields(0).name(), "keypoints");
  for (int i = 0; i < 4; ++i) {
    const uint64_t index = 4 + i;
    const std::string value = ColumnValue(batch, 0, i);
    ASSERT_GE(value.size(), 4u);
    EXPECT_THAT(ValuesOf<uint32_t>(value.substr(0, 4)), ElementsAre(3u));
    const std::vector<float> moved = V2MovedKeypoints(index, GetParam().steps);
    EXPECT_THAT(ValuesOf<float>(value.substr(4)), ElementsAreArray(moved)) << "sample " << index;
    // The last keypoint lies left of the output image: moved, never clamped or dropped.
    EXPECT_LT(moved[6], 0) << "sample " << index;
  }
}

// The 16x24 image: centre crop 12x16 at top 2, left 4; resize to 24x32 (x2) or 15x20 (x1.25).
INSTANTIATE_TEST_SUITE_P(
    FlipsCropsResizes, KeypointPipelineTest,
    ::testing::Values(
        KeypointPipelineCase{"decode, horizontal_flip(p=1), center_crop(height=12, width=16), "
                             "resize(height=24, width=32)",
                             {{V2KeypointStep::kFlip, 24, 0},
                              {V2KeypointStep::kCrop, 2, 4},
                              {V2KeypointStep::kResize, 2, 2}}},
        // The decode-and-crop fusion moves the crop into the decode.
        KeypointPipelineCase{"decode, center_crop(height=12, width=16), horizontal_flip(p=1), "
                             "vertical_flip(p=1), resize(height=15, width=20)",
                             {{V2KeypointStep::kCrop, 2, 4},
                              {V2KeypointStep::kFlip, 16, 0},
                              {V2KeypointStep::kVerticalFlip, 12, 0},
                              {V2KeypointStep::kResize, 1.25f, 1.25f}}}));

class BadTargetsTest : public ::testing::TestWithParam<BadTargetsCase> {};

// Every kind of bad stored targets: the sample is replaced by the next one of the plan, counted
// by its reason, and the batch (the job) goes on.
TEST_P(BadTargetsTest, IsReplacedAndCountedAndTheBatchGoesOn) {
  const BadTargetsCase& bad = GetParam();
  auto job = SceneContext(SceneJob({"image", "boxes", "box_labels", "masks"}), {{5, bad.kind}});
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  pb::BatchMessage batch;
  BadSampleCounters counters;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 1), 1, &scratch, &batch, &counters).ok());
  EXPECT_THAT(batch.header().sample_indices(), ElementsAre(4, 6, 6, 7));
  EXPECT_THAT(batch.header().bad_samples(), UnorderedElementsAre(Pair(bad.reason, 1)));
  EXPECT_THAT(ValuesOf<float>(ColumnValue(batch, 0, 1)), ElementsAreArray(MovedBox(6)));
  EXPECT_THAT(ValuesOf<int64_t>(ColumnValue(batch, 1, 1)), ElementsAre(7));
  SampleBuffer sample;
  ASSERT_TRUE(job.value()->source().Read(5, &sample).ok());
  StoredTargetValues values;
  values.boxes = absl::MakeConstSpan(sample.fields[0]);
  values.box_labels = absl::MakeConstSpan(sample.fields[1]);
  values.masks = absl::MakeConstSpan(sample.fields[2]);
  EXPECT_THAT(DecodeStoredTargets(values, kSceneHeight, kSceneWidth).status().message(),
              HasSubstr(bad.message));
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, BadTargetsTest,
    ::testing::Values(BadTargetsCase{BadTargets::kBoxOutside, "bad_annotation",
                                     "box 0 (0, 0, 30, 10) lies outside the 24x16 image"},
                      BadTargetsCase{BadTargets::kRaggedBoxes, "bad_annotation",
                                     "\"boxes\": 12 bytes are not whole values of 16 bytes"},
                      BadTargetsCase{BadTargets::kMasksOfAnotherSize, "bad_annotation",
                                     "masks are 17x24, the image is 16x24"},
                      BadTargetsCase{BadTargets::kLabelsNotOnePerBox, "bad_annotation",
                                     "box_labels has 2 entries for 1 boxes"},
                      BadTargetsCase{BadTargets::kMasksCountOverTheBound, "too_large",
                                     "\"masks\": 129 instances, over the bound of 128"}));

// Masks are counted at kMaxTargetInstances planes of the output image, boxes and labels at
// their own bounds: what --memory-bytes holds them to.
TEST(BatchTargetsTest, ABatchCountsItsTypedColumnsAtTheirWireBound) {
  auto job = SceneContext(SceneJob({"image", "boxes", "masks"}));
  ASSERT_TRUE(job.ok()) << job.status();
  const uint64_t pixels = 4 * kSceneHeight * kSceneWidth;
  const std::vector<std::string> columns = {"boxes", "masks"};
  EXPECT_EQ((*job)->max_batch_bytes(),
            (*job)->batch_bytes() + MaxFieldColumnBytes(4, columns, pixels));
  EXPECT_GE((*job)->max_batch_bytes(), (*job)->batch_bytes() + 4 * kMaxTargetInstances * pixels);
}

TEST(BatchTargetsTest, APipelineThatCannotMoveTargetsIsRefusedNamingTheOp) {
  pb::JobSpec spec = SceneJob({"image", "boxes"});
  spec.mutable_pipeline()->add_ops()->mutable_rand_augment();
  const absl::Status status = SceneContext(spec).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pipeline.ops[3] (rand_augment)"));
  // Without typed targets the same pipeline is fine.
  spec.clear_fields();
  EXPECT_TRUE(SceneContext(spec).ok());
}

TEST(BatchTargetsTest, ASyntheticDatasetHasNoTypedTargets) {
  pb::JobSpec spec = SceneJob({"image", "masks"});
  spec.clear_pipeline();
  pb::SyntheticSource* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(8);
  synthetic->set_height(8);
  synthetic->set_width(8);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  const absl::Status status = JobContext::Create(1, spec, DatasetIo::FromEnvironment()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"masks\""));
  EXPECT_THAT(status.message(), HasSubstr("typed targets come from stoker shards"));
}

}  // namespace
}  // namespace stoker
