// CheckTargetColumns against crafted batches: honest typed columns pass; a ragged value of each
// typed field is DATA_LOSS naming the column and the sample.

#include "wire/target_check.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/target_fields.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/batch_check.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// A batch of 2 uint8 HWC images of 2x3x1 (12 tensor bytes) and the typed columns `columns`
// (name, per-sample values), as a worker would lay them out.
struct TargetBatch {
  v1::BatchHeader header;
  std::string payload;

  TargetBatch(std::initializer_list<std::pair<const char*, std::vector<std::string>>> columns,
              v1::Layout layout = v1::LAYOUT_HWC) {
    const std::vector<int64_t> shape = layout == v1::LAYOUT_HWC ? std::vector<int64_t>{2, 2, 3, 1}
                                                                : std::vector<int64_t>{2, 1, 2, 3};
    for (int64_t dim : shape) header.add_shape(dim);
    header.set_dtype(v1::DTYPE_UINT8);
    header.set_layout(layout);
    for (int i = 0; i < 2; ++i) {
      header.add_sample_indices(i);
      header.add_labels(i);
    }
    payload.assign(12, '\0');
    for (const auto& [name, values] : columns) {
      v1::FieldColumn* column = header.add_fields();
      column->set_name(name);
      column->add_offsets(payload.size());
      for (const std::string& value : values) {
        payload += value;
        column->add_offsets(payload.size());
      }
    }
  }

  absl::Status Check() const {
    absl::Status header_ok = CheckBatchHeader(header, payload.size());
    if (!header_ok.ok()) return header_ok;
    BatchPayload bytes(
        BatchPayload::Chunk(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()),
        nullptr);
    return CheckTargetColumns(header, bytes);
  }
};

std::string Boxes(int n) { return std::string(16 * n, '\0'); }
std::string Labels(int n) { return std::string(8 * n, '\0'); }
std::string Masks(int n) { return std::string(6 * n, '\1'); }
std::string Keypoints(uint32_t per_instance, int n) {
  std::string value(4, '\0');
  std::memcpy(value.data(), &per_instance, 4);
  return value + std::string(12 * per_instance * n, '\0');
}

TEST(CheckTargetColumnsTest, HonestColumnsPass) {
  TargetBatch batch({{"boxes", {Boxes(2), Boxes(0)}},
                     {"text", {"a", "bc"}},
                     {"box_labels", {Labels(2), Labels(0)}},
                     {"masks", {Masks(2), Masks(0)}},
                     {"keypoints", {Keypoints(3, 2), Keypoints(3, 0)}}});
  EXPECT_TRUE(batch.Check().ok()) << batch.Check();
  // Masks take H x W from a CHW shape too.
  TargetBatch chw({{"masks", {Masks(1), Masks(3)}}}, v1::LAYOUT_CHW);
  EXPECT_TRUE(chw.Check().ok()) << chw.Check();
}

TEST(CheckTargetColumnsTest, RaggedValuesAreDataLossNamingTheColumnAndSample) {
  EXPECT_THAT(TargetBatch({{"boxes", {Boxes(1), Boxes(1) + "1234"}}}).Check(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[0] (\"boxes\") value 1: 20 bytes are not whole "
                                 "instances of 16 bytes")));
  EXPECT_THAT(
      TargetBatch({{"boxes", {Boxes(1), Boxes(1)}}, {"box_labels", {"1234", Labels(1)}}}).Check(),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("header.fields[1] (\"box_labels\") value 0: 4 bytes")));
  EXPECT_THAT(TargetBatch({{"masks", {Masks(1) + "x", Masks(1)}}}).Check(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[0] (\"masks\") value 0: 7 bytes are not whole "
                                 "instances of 6 bytes")));
  EXPECT_THAT(TargetBatch({{"keypoints", {Keypoints(2, 1) + "x", Keypoints(2, 1)}}}).Check(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.fields[0] (\"keypoints\") value 0: 25 bytes are not "
                                 "whole instances of 24 bytes")));
  EXPECT_THAT(TargetBatch({{"keypoints", {"12", Keypoints(2, 1)}}}).Check(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("(\"keypoints\") value 0: keypoints per instance must be")));
  EXPECT_THAT(TargetBatch({{"keypoints", {Keypoints(1, 1), Keypoints(65, 1)}}}).Check(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("value 1: keypoints per instance must be 1..64, got 65")));
}

TEST(CheckTargetColumnsTest, ASamplesColumnsAgreeOnItsInstances) {
  EXPECT_THAT(
      TargetBatch({{"boxes", {Boxes(2), Boxes(1)}}, {"masks", {Masks(2), Masks(2)}}}).Check(),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("header.fields[1] (\"masks\") value 1: 2 instances for 1 boxes")));
  EXPECT_THAT(
      TargetBatch({{"box_labels", {Labels(1), Labels(1)}}, {"boxes", {Boxes(1), Boxes(0)}}})
          .Check(),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("header.fields[0] (\"box_labels\") value 1: 1 instances for 0 boxes")));
}

// One label map a sample, of the image's H x W exactly, whatever the boxes hold.
TEST(CheckTargetColumnsTest, ASemanticMaskIsOneImageSizedMapNotTiedToTheBoxes) {
  EXPECT_TRUE(
      TargetBatch({{"boxes", {Boxes(2), Boxes(0)}}, {"semantic_mask", {Masks(1), Masks(1)}}})
          .Check()
          .ok());
  for (const std::string& value : {Masks(2), Masks(0), std::string(5, '\1')}) {
    EXPECT_THAT(TargetBatch({{"semantic_mask", {Masks(1), value}}}).Check(),
                StatusIs(absl::StatusCode::kDataLoss,
                         HasSubstr(absl::StrCat(
                             "header.fields[0] (\"semantic_mask\") value 1: ", value.size(),
                             " bytes are not one mask of the image's 6 pixels"))));
  }
}

TEST(CheckTargetColumnsTest, MoreThanTheInstanceBoundIsDataLoss) {
  const int over = static_cast<int>(kMaxTargetInstances) + 1;
  EXPECT_THAT(TargetBatch({{"boxes", {Boxes(over), Boxes(0)}}}).Check(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(absl::StrCat("value 0: ", over, " instances, more than ",
                                              kMaxTargetInstances))));
}

}  // namespace
}  // namespace stoker
