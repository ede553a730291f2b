#include "common/bad_sample.h"

#include "common/status_macros.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(BadSampleTest, ReasonSurvivesAPrefixedMessage) {
  const absl::Status inner = BadSampleError(BadSampleReason::kTooLarge, "50000x50000 pixels");
  const absl::Status prefixed = PrefixStatus("pipeline.ops[0] (decode): ", inner);
  const absl::Status rebuilt(inner.code(), inner.message());
  EXPECT_EQ(inner.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BadSampleReasonOf(inner), BadSampleReason::kTooLarge);
  EXPECT_EQ(prefixed.message(), "pipeline.ops[0] (decode): 50000x50000 pixels");
  EXPECT_EQ(BadSampleReasonOf(prefixed), BadSampleReason::kTooLarge);
  EXPECT_EQ(BadSampleReasonOf(rebuilt), std::nullopt);  // Rebuilt without its payload.
}

TEST(BadSampleTest, OtherStatusesAreNotBadSamples) {
  EXPECT_EQ(BadSampleReasonOf(absl::OkStatus()), std::nullopt);
  EXPECT_EQ(BadSampleReasonOf(absl::DataLossError("journal corrupt")), std::nullopt);
  EXPECT_EQ(BadSampleReasonOf(absl::InternalError("x")), std::nullopt);
}

TEST(BadSampleTest, ReasonNamesAreMetricLabels) {
  EXPECT_EQ(BadSampleReasonName(BadSampleReason::kReadError), "read_error");
  EXPECT_EQ(BadSampleReasonName(BadSampleReason::kCorruptRecord), "corrupt_record");
  EXPECT_EQ(BadSampleReasonName(BadSampleReason::kUnsupportedFormat), "unsupported_format");
  EXPECT_EQ(BadSampleReasonName(BadSampleReason::kDecodeError), "decode_error");
  EXPECT_EQ(BadSampleReasonName(BadSampleReason::kMissingField), "missing_field");
  EXPECT_EQ(BadSampleReasonName(BadSampleReason::kBadAnnotation), "bad_annotation");
}

}  // namespace
}  // namespace stoker
