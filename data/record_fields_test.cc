#include "data/record_fields.h"

#include <string>

#include "common/bad_sample.h"
#include "common/byte_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

std::string AsText(absl::Span<const uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

TEST(RecordFieldsTest, EncodesAndFindsEachFieldByteForByte) {
  const std::string caption = "un chat \xc3\xa9tonn\xc3\xa9 \xe2\x9c\x93";
  const std::string binary("\0\x01\xff", 3);
  auto metadata =
      EncodeRecordFields({{"text", caption}, {"json", "{\"id\": 7}"}, {"seg.png", binary}});
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  absl::Span<const uint8_t> value;
  ASSERT_EQ(FindRecordField(*metadata, "text", &value).value(), true);
  EXPECT_EQ(AsText(value), caption);
  ASSERT_EQ(FindRecordField(*metadata, "json", &value).value(), true);
  EXPECT_EQ(AsText(value), "{\"id\": 7}");
  ASSERT_EQ(FindRecordField(*metadata, "seg.png", &value).value(), true);
  EXPECT_EQ(AsText(value), binary);
  EXPECT_EQ(FindRecordField(*metadata, "tex", &value).value(), false);
}

TEST(RecordFieldsTest, LayoutIsNameLengthNameValueLengthValue) {
  auto metadata = EncodeRecordFields({{"ab", "xyz"}});
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(*metadata, std::string("\x02\x00"
                                   "ab"
                                   "\x03\x00\x00\x00"
                                   "xyz",
                                   11));
}

TEST(RecordFieldsTest, EmptyMetadataHasNoFields) {
  absl::Span<const uint8_t> value;
  EXPECT_EQ(FindRecordField("", "text", &value).value(), false);
  EXPECT_EQ(EncodeRecordFields({}).value(), "");
}

TEST(RecordFieldsTest, EncodeRefusesEmptyAndRepeatedNames) {
  EXPECT_THAT(EncodeRecordFields({{"", "x"}}).status().message(), HasSubstr("1 to 65535 bytes"));
  EXPECT_EQ(EncodeRecordFields({{"", "x"}}).status().code(), absl::StatusCode::kInvalidArgument);
  const absl::Status twice = EncodeRecordFields({{"text", "a"}, {"text", "b"}}).status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("field \"text\": named twice"));
}

// Metadata whose lengths run past its end is a corrupt record, whichever length lies.
TEST(RecordFieldsTest, HostileLengthsAreCorruptRecords) {
  std::string value_too_long(
      "\x04\x00text\xff\xff\xff\x7f"
      "abc",
      13);
  std::string name_too_long("\xff\xfftext", 6);
  std::string cut_in_length("\x04\x00text\x03\x00", 8);
  std::string trailing_byte = EncodeRecordFields({{"a", "b"}}).value() + "!";
  for (const std::string& metadata :
       {value_too_long, name_too_long, cut_in_length, trailing_byte}) {
    absl::Span<const uint8_t> value;
    // Asked for a name after the damage, so that the whole sequence is walked.
    const absl::StatusOr<bool> found = FindRecordField(metadata, "json", &value);
    ASSERT_FALSE(found.ok());
    EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(BadSampleReasonOf(found.status()), BadSampleReason::kCorruptRecord);
    EXPECT_THAT(found.status().message(), HasSubstr("runs past the metadata"));
  }
}

}  // namespace
}  // namespace stoker
