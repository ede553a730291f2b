// The stored and wire bytes of typed targets (target_codec.h): round trips, and every way stored
// bytes can be bad is a bad sample naming the field.

#include "augment/targets/target_codec.h"

#include <cstdint>
#include <string>
#include <vector>

#include "augment/testing/fixture_files.h"
#include "augment/testing/test_image_codecs.h"
#include "common/bad_sample.h"
#include "common/byte_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// A 4x6 canvas with two boxes, their labels, their instance masks and one keypoint each.
SampleTargets TwoInstances() {
  SampleTargets targets;
  targets.canvas_height = 4;
  targets.canvas_width = 6;
  targets.boxes = std::vector<float>{0, 0, 2, 2, 1.5f, 1, 6, 4};
  targets.box_labels = std::vector<int64_t>{7, -3};
  TargetMasks masks;
  masks.count = 2;
  masks.height = 4;
  masks.width = 6;
  masks.pixels.assign(2 * 24, 0);
  for (int y = 0; y < 2; ++y) masks.pixels[y * 6] = masks.pixels[y * 6 + 1] = 1;
  for (int i = 24 + 8; i < 48; ++i) masks.pixels[i] = 1;  // Mask 1 ends with a 1.
  targets.masks = masks;
  TargetKeypoints keypoints;
  keypoints.count = 2;
  keypoints.per_instance = 1;
  keypoints.xy = {1, 1, 3.25f, 2};
  keypoints.visibility = {2, 0};
  targets.keypoints = keypoints;
  return targets;
}

StoredTargetValues ValuesOf(const std::vector<std::pair<std::string, std::string>>& fields) {
  StoredTargetValues values;
  for (const auto& [name, value] : fields) {
    const absl::Span<const uint8_t> bytes = AsBytes(value);
    if (name == kBoxesField) values.boxes = bytes;
    if (name == kBoxLabelsField) values.box_labels = bytes;
    if (name == kMasksField) values.masks = bytes;
    if (name == kKeypointsField) values.keypoints = bytes;
  }
  return values;
}

void ExpectBadSample(const absl::StatusOr<SampleTargets>& decoded, BadSampleReason reason,
                     const std::string& message) {
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BadSampleReasonOf(decoded.status()), reason);
  EXPECT_THAT(decoded.status().message(), HasSubstr(message));
}

TEST(TargetCodecTest, StoredTargetsComeBackAsTheyWere) {
  const SampleTargets targets = TwoInstances();
  auto fields = EncodeStoredTargets(targets);
  ASSERT_TRUE(fields.ok()) << fields.status();
  ASSERT_EQ(fields->size(), 4u);
  auto decoded = DecodeStoredTargets(ValuesOf(*fields), 4, 6);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->boxes, targets.boxes);
  EXPECT_EQ(decoded->box_labels, targets.box_labels);
  EXPECT_EQ(decoded->masks->pixels, targets.masks->pixels);
  EXPECT_EQ(decoded->keypoints->xy, targets.keypoints->xy);
  EXPECT_EQ(decoded->keypoints->visibility, targets.keypoints->visibility);
}

TEST(TargetCodecTest, RunsAlternateFromZerosAndCoverTheMask) {
  const std::vector<uint8_t> mask = {1, 1, 0, 0, 0, 1};
  EXPECT_EQ(MaskToRuns(mask), (std::vector<uint32_t>{0, 2, 3, 1}));
  std::vector<uint8_t> back(6, 9);
  ASSERT_TRUE(RunsToMask(MaskToRuns(mask), absl::MakeSpan(back)).ok());
  EXPECT_EQ(back, mask);
  EXPECT_EQ(RunsToMask(std::vector<uint32_t>{2, 2}, absl::MakeSpan(back)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunsToMask(std::vector<uint32_t>{5, 2}, absl::MakeSpan(back)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TargetCodecTest, WireValuesAreFlatTensors) {
  const SampleTargets targets = TwoInstances();
  std::string boxes, labels, masks, keypoints;
  AppendWireTarget(kBoxesField, targets, &boxes);
  AppendWireTarget(kBoxLabelsField, targets, &labels);
  AppendWireTarget(kMasksField, targets, &masks);
  AppendWireTarget(kKeypointsField, targets, &keypoints);
  EXPECT_EQ(boxes.size(), 2u * 16);
  float x2 = 0;
  std::memcpy(&x2, boxes.data() + 24, 4);
  EXPECT_EQ(x2, 6.0f);
  ASSERT_EQ(labels.size(), 16u);
  int64_t second = 0;
  std::memcpy(&second, labels.data() + 8, 8);
  EXPECT_EQ(second, -3);
  EXPECT_EQ(masks, std::string(targets.masks->pixels.begin(), targets.masks->pixels.end()));
  ASSERT_EQ(keypoints.size(), 4u + 2 * 12);
  EXPECT_EQ(keypoints[0], 1);  // u32 per_instance
  float visibility = 0;
  std::memcpy(&visibility, keypoints.data() + 4 + 8, 4);
  EXPECT_EQ(visibility, 2.0f);
  SampleTargets none;
  std::string empty;
  AppendWireTarget(kMasksField, none, &empty);
  EXPECT_TRUE(empty.empty());
}

TEST(TargetCodecTest, StoredBytesThatDoNotParseAreBadAnnotations) {
  const auto fields = *EncodeStoredTargets(TwoInstances());
  StoredTargetValues values = ValuesOf(fields);
  const std::string boxes = fields[0].second;
  values.boxes = AsBytes(absl::string_view(boxes).substr(0, 30));
  ExpectBadSample(DecodeStoredTargets(values, 4, 6), BadSampleReason::kBadAnnotation,
                  "\"boxes\": 30 bytes are not whole values of 16 bytes");

  values = ValuesOf(fields);
  std::string masks = fields[2].second;
  masks.resize(masks.size() - 4);
  values.masks = AsBytes(masks);
  ExpectBadSample(DecodeStoredTargets(values, 4, 6), BadSampleReason::kBadAnnotation,
                  "\"masks\": mask 1");

  values = ValuesOf(fields);
  values.keypoints = AsBytes(absl::string_view(fields[3].second).substr(0, 12));
  ExpectBadSample(DecodeStoredTargets(values, 4, 6), BadSampleReason::kBadAnnotation,
                  "\"keypoints\"");
}

TEST(TargetCodecTest, TargetsThatDoNotFitTheImageAreBadAnnotations) {
  const auto fields = *EncodeStoredTargets(TwoInstances());
  // The masks are 4x6; the image decodes to 5x6.
  ExpectBadSample(DecodeStoredTargets(ValuesOf(fields), 5, 6), BadSampleReason::kBadAnnotation,
                  "\"masks\": masks are 4x6, the image is 5x6");
  StoredTargetValues no_masks = ValuesOf(fields);
  no_masks.masks.reset();
  no_masks.keypoints.reset();
  // Box 1 reaches x = 6 on a 5-wide image.
  ExpectBadSample(DecodeStoredTargets(no_masks, 4, 5), BadSampleReason::kBadAnnotation,
                  "\"boxes\": box 1 (1.5, 1, 6, 4) lies outside the 5x4 image");
  const std::string one_label = fields[1].second.substr(0, 8);
  no_masks.box_labels = AsBytes(one_label);
  ExpectBadSample(DecodeStoredTargets(no_masks, 4, 6), BadSampleReason::kBadAnnotation,
                  "targets.box_labels has 1 entries for 2 boxes");
}

TEST(TargetCodecTest, MoreInstancesThanTheBoundAreTooLarge) {
  StoredTargetValues values;
  const std::string labels((kMaxTargetInstances + 1) * 8, '\0');
  values.box_labels = AsBytes(labels);
  ExpectBadSample(DecodeStoredTargets(values, 4, 6), BadSampleReason::kTooLarge,
                  "\"box_labels\": 129 instances");
  // A mask count the bytes cannot back is refused before anything is allocated.
  std::string masks;
  AppendLittleEndian(uint32_t{100}, &masks);
  AppendLittleEndian(uint32_t{4}, &masks);
  AppendLittleEndian(uint32_t{6}, &masks);
  values = StoredTargetValues{};
  values.masks = AsBytes(masks);
  ExpectBadSample(DecodeStoredTargets(values, 4, 6), BadSampleReason::kBadAnnotation,
                  "100 masks in 0 bytes");
  // 128 masks of a 2048x2048 image would take 512 MiB: refused before any is unpacked.
  std::string huge;
  AppendLittleEndian(kMaxTargetInstances, &huge);
  AppendLittleEndian(uint32_t{2048}, &huge);
  AppendLittleEndian(uint32_t{2048}, &huge);
  values.masks = AsBytes(huge);
  ExpectBadSample(DecodeStoredTargets(values, 2048, 2048), BadSampleReason::kTooLarge,
                  "\"masks\": 128 masks of 2048x2048 are over the bound of 268435456 bytes");
}

TEST(TargetCodecTest, TargetFieldsAreTheFiveTypedNames) {
  EXPECT_TRUE(IsTargetField("boxes"));
  EXPECT_TRUE(IsTargetField("box_labels"));
  EXPECT_TRUE(IsTargetField("masks"));
  EXPECT_TRUE(IsTargetField("keypoints"));
  EXPECT_TRUE(IsTargetField("semantic_mask"));
  EXPECT_FALSE(IsTargetField("text"));
  EXPECT_FALSE(IsTargetField("seg.png"));  // A pass-through field: the PNG's bytes untouched.
  EXPECT_EQ(MaxWireTargetBytes("masks", 10 * 20), uint64_t{kMaxTargetInstances} * 200);
  EXPECT_EQ(MaxWireTargetBytes("semantic_mask", 10 * 20), 200u);
}

std::string LabelMapFile(const std::string& name) {
  const std::vector<uint8_t> bytes =
      ReadFixtureFile(std::string(STOKER_TARGETS_TESTDATA_DIR) + "/label_maps/" + name + ".png");
  return std::string(bytes.begin(), bytes.end());
}

absl::StatusOr<SampleTargets> DecodeLabelMapValue(const std::string& png, uint32_t height,
                                                  uint32_t width) {
  StoredTargetValues values;
  values.semantic_mask = AsBytes(png);
  return DecodeStoredTargets(values, height, width);
}

// testdata/make_label_maps.py: a 4-bit palette PNG whose indices, not colours, are the labels.
TEST(TargetCodecTest, SemanticMaskIsThePalettesIndexOnTheWire) {
  auto decoded = DecodeLabelMapValue(LabelMapFile("palette"), 4, 6);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(decoded->semantic_mask.has_value());
  std::string wire;
  AppendWireTarget(kSemanticMaskField, *decoded, &wire);
  std::string expected;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) expected.push_back(static_cast<char>((x + y) % 6));
  }
  EXPECT_EQ(wire, expected);
}

TEST(TargetCodecTest, SemanticMaskFromEightBitGrayKeepsItsValues) {
  std::vector<uint8_t> labels(4 * 6);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<uint8_t>(i * 10);
  const std::vector<uint8_t> png =
      EncodePng(ImageView{labels.data(), ImageShape{4, 6, 1, PixelType::kUint8}});
  auto decoded = DecodeLabelMapValue(std::string(png.begin(), png.end()), 4, 6);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->semantic_mask->pixels, labels);
}

// A label map that cannot be used is a bad annotation naming the field and why: the worker
// skips the sample and counts it.
TEST(TargetCodecTest, BadLabelMapsAreBadAnnotations) {
  ExpectBadSample(DecodeLabelMapValue(LabelMapFile("palette"), 8, 6),
                  BadSampleReason::kBadAnnotation, "\"semantic_mask\": is 6x4, expected 6x8");
  ExpectBadSample(DecodeLabelMapValue(LabelMapFile("gray16"), 4, 6),
                  BadSampleReason::kBadAnnotation,
                  "\"semantic_mask\": 16-bit gray: label maps are 8-bit gray or palette");
  std::vector<uint8_t> rgb(4 * 6 * 3, 1);
  const std::vector<uint8_t> png =
      EncodePng(ImageView{rgb.data(), ImageShape{4, 6, 3, PixelType::kUint8}});
  ExpectBadSample(DecodeLabelMapValue(std::string(png.begin(), png.end()), 4, 6),
                  BadSampleReason::kBadAnnotation,
                  "\"semantic_mask\": colour or alpha: label maps are 8-bit gray or palette");
  ExpectBadSample(DecodeLabelMapValue("\xff\xd8\xff a JPEG", 4, 6), BadSampleReason::kBadAnnotation,
                  "\"semantic_mask\": not a PNG");
  std::string truncated = LabelMapFile("palette");
  truncated.resize(truncated.size() - 20);
  ExpectBadSample(DecodeLabelMapValue(truncated, 4, 6), BadSampleReason::kBadAnnotation,
                  "\"semantic_mask\": ");
}

}  // namespace
}  // namespace stoker
