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
  auto source = CreateSource(Synthetic(100, 5, 7, 3), 99, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok());
  EXPECT_FALSE((*source)->format().encoded);
  EXPECT_EQ((*source)->format().shape, (ImageShape{5, 7, 3, PixelType::kUint8}));
  EXPECT_EQ((*source)->Locate(37), "synthetic sample 37");
  SampleBuffer a, b;
  ASSERT_TRUE((*source)->Read(37, &a).ok());
  ASSERT_TRUE((*source)->Read(37, &b).ok());
  EXPECT_EQ(a.label, 7);
  EXPECT_EQ(b.label, 7);
  EXPECT_EQ(std::memcmp(a.image.view().data, b.image.view().data, a.image.shape().bytes()), 0);
  ASSERT_TRUE((*source)->Read(38, &b).ok());
  EXPECT_NE(std::memcmp(a.image.view().data, b.image.view().data, a.image.shape().bytes()), 0);
}

TEST(SyntheticSourceTest, SeedChangesPixels) {
  auto s1 = CreateSource(Synthetic(10, 4, 4, 1), 1, DatasetIo::FromEnvironment());
  auto s2 = CreateSource(Synthetic(10, 4, 4, 1), 2, DatasetIo::FromEnvironment());
  SampleBuffer a, b;
  ASSERT_TRUE((*s1)->Read(0, &a).ok());
  ASSERT_TRUE((*s2)->Read(0, &b).ok());
  EXPECT_NE(std::memcmp(a.image.view().data, b.image.view().data, 16), 0);
}

TEST(SyntheticSourceTest, FingerprintFollowsThePixelsParameters) {
  auto fingerprint = [](const stoker::v1::DatasetSpec& spec, uint64_t seed) {
    return (*CreateSource(spec, seed, DatasetIo::FromEnvironment()))->fingerprint();
  };
  const uint64_t base = fingerprint(Synthetic(10, 4, 4, 1), 1);
  EXPECT_NE(base, 0u);
  EXPECT_EQ(fingerprint(Synthetic(10, 4, 4, 1), 1), base);
  EXPECT_NE(fingerprint(Synthetic(10, 4, 4, 1), 2), base);
  EXPECT_NE(fingerprint(Synthetic(10, 4, 5, 1), 1), base);
  EXPECT_NE(fingerprint(Synthetic(11, 4, 4, 1), 1), base);
}

TEST(SyntheticSourceTest, OutOfRangeIndex) {
  auto source = CreateSource(Synthetic(3, 2, 2, 1), 0, DatasetIo::FromEnvironment());
  SampleBuffer sample;
  EXPECT_EQ((*source)->Read(3, &sample).code(), absl::StatusCode::kOutOfRange);
}

TEST(DatasetSpecTest, NamesTheBadField) {
  auto check = [](const stoker::v1::DatasetSpec& spec, const std::string& field) {
    absl::Status status = ValidateDatasetSpec(spec);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr(field));
  };
  check(stoker::v1::DatasetSpec(), "dataset");
  check(Synthetic(0, 2, 2, 3), "num_samples");
  check(Synthetic((uint64_t{1} << 48) + 1, 2, 2, 3), "num_samples");
  // Web-scale datasets are fine: plans hold no per-sample state.
  EXPECT_TRUE(ValidateDatasetSpec(Synthetic(uint64_t{1} << 40, 2, 2, 3)).ok());
  check(Synthetic(5, 0, 2, 3), "height");
  check(Synthetic(5, 2, 0, 3), "width");
  check(Synthetic(5, 2, 2, 2), "channels");
  check(Synthetic(5, 50000, 50000, 3), "pixels");
  EXPECT_EQ(CreateSource(Synthetic(5, 2, 2, 2), 0, DatasetIo::FromEnvironment()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
