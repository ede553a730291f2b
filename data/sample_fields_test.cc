#include "data/sample_fields.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

stoker::v1::JobSpec WithFields(const std::vector<std::string>& fields) {
  stoker::v1::JobSpec spec;
  for (const std::string& field : fields) spec.add_fields(field);
  return spec;
}

void ExpectRefused(const std::vector<std::string>& fields, const std::string& message) {
  const absl::Status status = SourceFields(WithFields(fields)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
  EXPECT_THAT(status.message(), HasSubstr(message));
}

TEST(SampleFieldsTest, SourceFieldsAreAllButImageAndLabelInOrder) {
  auto fields = SourceFields(WithFields({"json", "image", "seg.png", "label", "text"}));
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_THAT(*fields, ElementsAre("json", "seg.png", "text"));
  EXPECT_TRUE(SourceFields(WithFields({})).value().empty());
  EXPECT_TRUE(SourceFields(WithFields({"image"})).value().empty());
}

// Typed targets are read from the record like pass-through fields (the worker moves them).
TEST(SampleFieldsTest, TypedTargetsAreSourceFields) {
  auto fields =
      SourceFields(WithFields({"image", "boxes", "box_labels", "masks", "keypoints", "text"}));
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_THAT(*fields, ElementsAre("boxes", "box_labels", "masks", "keypoints", "text"));
  EXPECT_TRUE(SourceFields(WithFields({"image", "masks"})).ok());
}

TEST(SampleFieldsTest, BadNamesAreRefusedNamingTheirPosition) {
  ExpectRefused({"image", "text", "text"}, "fields[2]: \"text\" is named twice");
  ExpectRefused({"image", "box_labels", "masks"}, "fields[1]: \"box_labels\" needs \"boxes\"");
  ExpectRefused({"", "image"}, "fields[0]: must not be empty");
  ExpectRefused({"image", "Text"}, "fields[1]: \"Text\" is not a field name");
  ExpectRefused({"image", ".txt"}, "fields[1]: \".txt\" is not a field name");
  ExpectRefused({"image", "txt"}, "fields[1]: \"txt\": a WebDataset .txt is the field \"text\"");
  ExpectRefused({"image", "cls"}, "fields[1]: \"cls\": a WebDataset .cls is the field \"label\"");
  ExpectRefused({"image", std::string(kMaxFieldNameBytes + 1, 'a')}, "fields[1]: longer than");
  ExpectRefused({"text", "label"}, "fields: must name \"image\"");
  ExpectRefused(std::vector<std::string>(kMaxJobFields + 1, "image"),
                "fields: 65 names, at most 64");
}

TEST(SampleFieldsTest, WebDatasetExtensionOfTextIsTxt) {
  EXPECT_EQ(WebDatasetExtension("text"), "txt");
  EXPECT_EQ(WebDatasetExtension("json"), "json");
  EXPECT_EQ(WebDatasetExtension("seg.png"), "seg.png");
  EXPECT_EQ(WebDatasetExtension("semantic_mask"), "seg.png");
}

}  // namespace
}  // namespace stoker
