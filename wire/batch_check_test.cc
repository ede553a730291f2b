// CheckBatchHeader against crafted headers: each lie a worker could tell is DATA_LOSS naming the
// field, and an honest header passes.

#include "wire/batch_check.h"

#include <cstdint>
#include <initializer_list>

#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// An honest header: 2 uint8 HWC samples of 1x1x3, so 6 payload bytes.
v1::BatchHeader Honest() {
  v1::BatchHeader header;
  for (int64_t dim : {2, 1, 1, 3}) header.add_shape(dim);
  header.set_dtype(v1::DTYPE_UINT8);
  header.set_layout(v1::LAYOUT_HWC);
  for (int i = 0; i < 2; ++i) {
    header.add_sample_indices(i);
    header.add_labels(i);
  }
  return header;
}

void SetShape(v1::BatchHeader* header, std::initializer_list<int64_t> dims) {
  header->clear_shape();
  for (int64_t dim : dims) header->add_shape(dim);
}

TEST(CheckBatchHeaderTest, AnHonestHeaderPasses) {
  EXPECT_TRUE(CheckBatchHeader(Honest(), 6).ok());
  v1::BatchHeader floats = Honest();
  floats.set_dtype(v1::DTYPE_FLOAT32);
  floats.set_layout(v1::LAYOUT_CHW);
  for (int i = 0; i < 4; ++i) floats.add_soft_labels(0.5f);
  EXPECT_TRUE(CheckBatchHeader(floats, 24).ok());
}

TEST(CheckBatchHeaderTest, AShapeLargerThanThePayloadIsDataLoss) {
  v1::BatchHeader header = Honest();
  SetShape(&header, {2, 224, 224, 3});
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.shape: [2, 224, 224, 3] of 1-byte elements is 301056 "
                                 "bytes, the payload 6")));
  EXPECT_THAT(CheckBatchHeader(Honest(), 5),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.shape")));
}

TEST(CheckBatchHeaderTest, AShapeWhoseProductOverflowsIsDataLoss) {
  v1::BatchHeader header = Honest();
  header.set_dtype(v1::DTYPE_FLOAT32);
  // 2^62 * 4 wraps to 0 bytes in 64 bits: an unchecked product would accept an empty payload.
  SetShape(&header, {2, int64_t{1} << 30, int64_t{1} << 31, 1});
  EXPECT_THAT(CheckBatchHeader(header, 0),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.shape: [2, 1073741824, 2147483648, 1] times the element "
                                 "size overflows 64 bits")));
}

TEST(CheckBatchHeaderTest, ANegativeOrMissingDimensionIsDataLoss) {
  v1::BatchHeader header = Honest();
  SetShape(&header, {2, -1, -1, 3});  // the product, 6, matches the payload
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("has a negative dimension")));
  SetShape(&header, {2, 3});
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.shape: [2, 3] has 2 dimensions, not 4")));
}

TEST(CheckBatchHeaderTest, LabelOrIndexCountsOtherThanTheSamplesAreDataLoss) {
  v1::BatchHeader header = Honest();
  header.add_labels(7);
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.labels: 3 labels, the shape says 2 samples")));
  header = Honest();
  header.mutable_sample_indices()->RemoveLast();
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.sample_indices: 1 indices, the shape says 2 samples")));
  header = Honest();
  for (int i = 0; i < 3; ++i) header.add_soft_labels(1.0f);
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.soft_labels: 3 values are not whole rows for 2 samples")));
}

TEST(CheckBatchHeaderTest, AnUnknownDtypeOrLayoutIsDataLoss) {
  v1::BatchHeader header = Honest();
  header.set_dtype(static_cast<v1::DType>(99));
  EXPECT_THAT(
      CheckBatchHeader(header, 6),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.dtype: unknown element type 99")));
  header.set_dtype(v1::DTYPE_UNSPECIFIED);
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.dtype")));
  header = Honest();
  header.set_layout(v1::LAYOUT_UNSPECIFIED);
  EXPECT_THAT(CheckBatchHeader(header, 6),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.layout: unknown layout 0")));
}

// Honest() with two field columns after its 6 tensor bytes: "text" values of 3 and 0 bytes
// [6, 9, 9), "json" of 2 and 4 bytes [9, 11, 15): a 15-byte payload.
v1::BatchHeader WithFields() {
  v1::BatchHeader header = Honest();
  v1::FieldColumn* text = header.add_fields();
  text->set_name("text");
  for (uint64_t offset : {6, 9, 9}) text->add_offsets(offset);
  v1::FieldColumn* json = header.add_fields();
  json->set_name("json");
  for (uint64_t offset : {9, 11, 15}) json->add_offsets(offset);
  return header;
}

TEST(CheckBatchHeaderFieldsTest, HonestColumnsPassAndTheTensorEndsWhereTheyStart) {
  EXPECT_TRUE(CheckBatchHeader(WithFields(), 15).ok());
  EXPECT_EQ(TensorBytes(WithFields(), 15), 6u);
  EXPECT_EQ(TensorBytes(Honest(), 6), 6u);
}

TEST(CheckBatchHeaderFieldsTest, AnOffsetPastThePayloadIsDataLoss) {
  v1::BatchHeader header = WithFields();
  header.mutable_fields(1)->set_offsets(1, 40);
  EXPECT_THAT(CheckBatchHeader(header, 15),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[1] (\"json\"): value 0 ends at 40, past the "
                                 "payload's 15 bytes")));
  // A first column starting past the payload.
  header = WithFields();
  header.mutable_fields(0)->set_offsets(0, 99);
  EXPECT_THAT(CheckBatchHeader(header, 15),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[0]: starts at 99, past the payload's 15 bytes")));
}

TEST(CheckBatchHeaderFieldsTest, DecreasingOffsetsAreDataLoss) {
  v1::BatchHeader header = WithFields();
  header.mutable_fields(0)->set_offsets(1, 5);
  EXPECT_THAT(CheckBatchHeader(header, 15),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[0] (\"text\"): offsets decrease at value 0: 6 "
                                 "then 5")));
}

TEST(CheckBatchHeaderFieldsTest, AWrongOffsetCountIsDataLoss) {
  v1::BatchHeader header = WithFields();
  header.mutable_fields(1)->add_offsets(15);
  EXPECT_THAT(CheckBatchHeader(header, 15),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[1] (\"json\"): 4 offsets, the shape says 2 "
                                 "samples (3 offsets)")));
}

TEST(CheckBatchHeaderFieldsTest, ColumnsMustTileThePayloadAfterTheTensor) {
  // A gap between the columns.
  v1::BatchHeader gap = WithFields();
  gap.mutable_fields(1)->set_offsets(0, 10);
  EXPECT_THAT(CheckBatchHeader(gap, 15),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[1] (\"json\"): starts at 10, not at 9")));
  // Bytes left after the last column.
  EXPECT_THAT(
      CheckBatchHeader(WithFields(), 16),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("header.fields[1]: the last column ends at 15, the payload at 16")));
  // A tensor that the columns' start makes shorter than the shape says.
  v1::BatchHeader overlap = WithFields();
  overlap.mutable_fields(0)->set_offsets(0, 5);
  EXPECT_THAT(CheckBatchHeader(overlap, 15),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.shape: [2, 1, 1, 3]")));
}

}  // namespace
}  // namespace stoker
