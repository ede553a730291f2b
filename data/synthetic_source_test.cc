#include "data/synthetic_source.h"

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

stoker::v1::DatasetSpec Synthetic(uint64_t n, uint32_t h, uint32_t w, uint32_t c) {
  stoker::v1::DatasetSpec spec;
  auto* s = spec.mutable_synthetic();
  s->set_num_samples(n);
  s->set_height(h);
  s->set_width(w);
  s->set_channels(c);
  s->set_num_classes(10);
  return spec;
}

TEST(SyntheticSourceTest, SameIndexSameImageAndLabel) {
  auto source = CreateSource(Synthetic(100, 5, 7, 3), 99);
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->image_shape(), (ImageShape{5, 7, 3, PixelType::kUint8}));
  ImageBuffer a, b;
  int64_t la = -1, lb = -1;
  ASSERT_TRUE((*source)->Read(37, &a, &la).ok());
  ASSERT_TRUE((*source)->Read(37, &b, &lb).ok());
  EXPECT_EQ(la, 7);
  EXPECT_EQ(lb, 7);
  EXPECT_EQ(std::memcmp(a.view().data, b.view().data, a.shape().bytes()), 0);
  ASSERT_TRUE((*source)->Read(38, &b, &lb).ok());
  EXPECT_NE(std::memcmp(a.view().data, b.view().data, a.shape().bytes()), 0);
}

TEST(SyntheticSourceTest, SeedChangesPixels) {
  auto s1 = CreateSource(Synthetic(10, 4, 4, 1), 1);
  auto s2 = CreateSource(Synthetic(10, 4, 4, 1), 2);
  ImageBuffer a, b;
  int64_t label;
  ASSERT_TRUE((*s1)->Read(0, &a, &label).ok());
  ASSERT_TRUE((*s2)->Read(0, &b, &label).ok());
  EXPECT_NE(std::memcmp(a.view().data, b.view().data, 16), 0);
}

TEST(SyntheticSourceTest, OutOfRangeIndex) {
  auto source = CreateSource(Synthetic(3, 2, 2, 1), 0);
  ImageBuffer image;
  int64_t label;
  EXPECT_EQ((*source)->Read(3, &image, &label).code(), absl::StatusCode::kOutOfRange);
}

TEST(DatasetSpecTest, NamesTheBadField) {
  auto check = [](const stoker::v1::DatasetSpec& spec, const std::string& field) {
    absl::Status status = ValidateDatasetSpec(spec);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr(field));
  };
  check(stoker::v1::DatasetSpec(), "dataset");
  check(Synthetic(0, 2, 2, 3), "num_samples");
  check(Synthetic(uint64_t{1} << 40, 2, 2, 3), "num_samples");
  check(Synthetic(5, 0, 2, 3), "height");
  check(Synthetic(5, 2, 0, 3), "width");
  check(Synthetic(5, 2, 2, 2), "channels");
  check(Synthetic(5, 50000, 50000, 3), "pixels");
  EXPECT_EQ(DatasetImageShape(Synthetic(5, 2, 2, 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
