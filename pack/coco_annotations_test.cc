#include "pack/coco_annotations.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An instances file with images 3 (640x480) and 1 (20x10) and categories 1 and 5, holding
// `annotations` (JSON objects).
std::string CocoInstancesWith(const std::vector<std::string>& annotations) {
  return absl::StrCat(
      R"({"images": [{"id": 3, "file_name": "a/3.jpg", "width": 640, "height": 480},
                     {"id": 1, "file_name": "1.png", "width": 20, "height": 10}],
          "categories": [{"id": 5, "name": "dog"}, {"id": 1, "name": "cat"}],
          "annotations": [)",
      absl::StrJoin(annotations, ", "), "]}");
}

constexpr char kCocoWholeImageBox[] =
    R"({"id": 1, "image_id": 3, "category_id": 1, "bbox": [0, 0, 640, 480]})";

absl::Status CocoRefusal(const std::string& json, const CocoLimits& limits = CocoLimits()) {
  return ParseCocoInstances(json, "instances.json", limits).status();
}

void ExpectCocoRefused(const std::string& json, const std::string& message,
                       const CocoLimits& limits = CocoLimits()) {
  const absl::Status status = CocoRefusal(json, limits);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
  EXPECT_THAT(status.message(), HasSubstr(message));
}

TEST(CocoAnnotationsTest, ImagesByIdWithTheirAnnotationsCrowdsLeftOut) {
  absl::StatusOr<CocoDataset> dataset = ParseCocoInstances(
      CocoInstancesWith({
          R"({"id": 9, "image_id": 3, "category_id": 5, "bbox": [1.5, 2, 10, 20.25],
              "segmentation": [[1.5, 2, 11.5, 2, 11.5, 22.25]], "iscrowd": 0})",
          R"({"id": 10, "image_id": 3, "category_id": 1, "bbox": [0, 0, 640, 480],
              "segmentation": {"size": [480, 640], "counts": [0, 307200]}, "iscrowd": 1})",
          R"({"id": 11, "image_id": 1, "category_id": 1, "bbox": [0, 0, 20, 10],
              "segmentation": {"size": [10, 20], "counts": "0X6"}})",
      }),
      "instances.json", CocoLimits());
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  ASSERT_EQ(dataset->images.size(), 2u);
  EXPECT_EQ(dataset->images[0].id, 1);
  EXPECT_EQ(dataset->images[0].index, 1u);
  EXPECT_EQ(dataset->images[1].file_name, "a/3.jpg");
  ASSERT_EQ(dataset->images[1].annotations.size(), 1u);  // The crowd is left out.
  const CocoAnnotation& annotation = dataset->images[1].annotations[0];
  EXPECT_EQ(annotation.id, 9);
  EXPECT_EQ(annotation.category_id, 5);
  EXPECT_THAT(annotation.box, ElementsAre(1.5f, 2.0f, 11.5f, 22.25f));
  ASSERT_TRUE(annotation.segmentation.has_value());
  EXPECT_THAT(annotation.segmentation->polygons,
              ElementsAre(ElementsAre(1.5, 2, 11.5, 2, 11.5, 22.25)));
  // "0X6": no 0s, then 200 1s in two groups: 'X' - 48 = 0x20 | 8, '6' - 48 = 6; 8 + 6 × 32.
  EXPECT_THAT(dataset->images[0].annotations[0].segmentation->rle_counts, ElementsAre(0, 200));
  EXPECT_TRUE(dataset->has_masks);
  EXPECT_EQ(dataset->keypoints_per_instance, 0u);
  EXPECT_THAT(dataset->categories, ElementsAre(std::pair<int64_t, std::string>(1, "cat"),
                                               std::pair<int64_t, std::string>(5, "dog")));
}

TEST(CocoAnnotationsTest, EmptySegmentationsMeanNoMasksAndKeypointsAreKept) {
  absl::StatusOr<CocoDataset> dataset = ParseCocoInstances(
      CocoInstancesWith({R"({"id": 4, "image_id": 1, "category_id": 1, "bbox": [2, 3, 4, 5],
                         "segmentation": [], "keypoints": [3, 4, 2, 0, 0, 0]})"}),
      "instances.json", CocoLimits());
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_FALSE(dataset->has_masks);
  EXPECT_EQ(dataset->keypoints_per_instance, 2u);
  EXPECT_THAT(dataset->images[0].annotations[0].keypoints, ElementsAre(3, 4, 2, 0, 0, 0));
}

TEST(CocoAnnotationsTest, ABoxOutsideItsImageIsRefusedNamingIt) {
  ExpectCocoRefused(
      CocoInstancesWith({kCocoWholeImageBox, R"({"id": 907, "image_id": 3, "category_id": 1,
                                              "bbox": [10, 5, 900, 20]})"}),
      "instances.json: annotations[1] (id 907): bbox [10, 5, 900, 20] lies outside "
      "image 3 (640x480)");
  ExpectCocoRefused(CocoInstancesWith({R"({"id": 8, "image_id": 3, "category_id": 1,
                                   "bbox": [-1, 5, 9, 20]})"}),
                    "annotations[0] (id 8): bbox [-1, 5, 9, 20] lies outside image 3 (640x480)");
}

TEST(CocoAnnotationsTest, MalformedJsonIsRefusedWithoutQuotingTheFile) {
  const absl::Status status = CocoRefusal(R"({"images": [ {"id": 3,, "secret": 1} ]})");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("instances.json: malformed JSON"));
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("secret")));
  ExpectCocoRefused("[1, 2]", "instances.json: malformed JSON");
  ExpectCocoRefused(R"({"images": []})", "instances.json: the file: has no \"categories\"");
}

TEST(CocoAnnotationsTest, AMaskOfAnotherSizeIsRefused) {
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 5, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": {"size": [480, 320], "counts": [153600]}})"}),
      "annotations[0] (id 5): the segmentation's size is not [height, width] of image "
      "3 (640x480)");
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 5, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": {"size": [480, 640], "counts": [307201]}})"}),
      "annotations[0] (id 5): the segmentation's counts sum to 307201, not the 307200 "
      "pixels of image 3 (640x480)");
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": {"size": [10, 20], "counts": "0e"}})"}),
      "annotations[0] (id 5): counts: the string ends inside count 1");
}

TEST(CocoAnnotationsTest, APolygonPointOutsideItsImageCountsAsABoxOutside) {
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 6, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": [[0, 0, 700, 5, 0, 5]]})"}),
      "annotations[0] (id 6): segmentation[0] point 1 (700, 5) lies outside image 3 "
      "(640x480)");
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 6, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": [[0, 0, 5, 5]]})"}),
      "segmentation[0] has 4 coordinates, not an even number >= 6");
}

TEST(CocoAnnotationsTest, AnUnknownImageOrCategoryIsRefused) {
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 7, "image_id": 4, "category_id": 1, "bbox": [0, 0, 1, 1]})"}),
      "instances.json: annotations[0] (id 7): image_id 4 is not in images");
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 7, "image_id": 3, "category_id": 2, "bbox": [0, 0, 1, 1]})"}),
      "annotations[0] (id 7): category_id 2 is not in categories");
}

TEST(CocoAnnotationsTest, WhatWouldMakeThePackerHoldTooMuchIsRefused) {
  std::vector<std::string> points;
  for (size_t p = 0; p <= kMaxCocoPolygonPoints; ++p) points.push_back("1, 1");
  ExpectCocoRefused(CocoInstancesWith({absl::StrCat(
                        R"({"id": 2, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                        "segmentation": [[)",
                        absl::StrJoin(points, ", "), "]]}")}),
                    absl::StrCat("annotations[0] (id 2): the segmentation has over ",
                                 kMaxCocoPolygonPoints, " polygon points"));
  CocoLimits limits;
  limits.max_pixels = 640 * 480 - 1;
  ExpectCocoRefused(CocoInstancesWith({}),
                    "images[0] (id 3): size 640x480 is not in 1..307199 pixels", limits);
  limits = CocoLimits();
  limits.max_instances = 1;
  ExpectCocoRefused(CocoInstancesWith({kCocoWholeImageBox, kCocoWholeImageBox}),
                    "annotations[1] (id 1): image 3 has over 1 annotations", limits);
  limits = CocoLimits();
  limits.max_mask_bytes = 640 * 480 - 1;
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 3, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": [[0, 0, 1, 0, 1, 1]]})"}),
      "images[0] (id 3): its 1 masks of 640x480 would hold 307200 bytes", limits);
}

TEST(CocoAnnotationsTest, MixedSegmentationsAndForeignPathsAreRefused) {
  ExpectCocoRefused(
      CocoInstancesWith({R"({"id": 1, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1],
                                   "segmentation": [[0, 0, 1, 0, 1, 1]]})",
                         R"({"id": 2, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1]})"}),
      "annotation id 2: has no segmentation while annotation id 1 has one");
  ExpectCocoRefused(
      R"({"images": [{"id": 1, "file_name": "../x.png", "width": 2, "height": 2}],
                    "categories": [], "annotations": []})",
      "images[0] (id 1): \"file_name\" is not a relative path inside the images folder");
}

}  // namespace
}  // namespace stoker
