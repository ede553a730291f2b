#include "pack/coco_masks.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The rule written as a per-pixel test, independent of the scanline: the pixel's centre inside
// by the even-odd rule, casting a ray to the left: an edge counts where its half-open
// [low y, high y) holds the centre's y and it crosses at or left of the centre's x (so a centre
// exactly on a left edge is inside and on a right edge outside).
bool CentreInsideByRayCast(const std::vector<double>& xy, double cx, double cy) {
  bool inside = false;
  const size_t points = xy.size() / 2;
  for (size_t p = 0; p < points; ++p) {
    const size_t q = (p + 1) % points;
    const double xa = xy[2 * p], ya = xy[2 * p + 1], xb = xy[2 * q], yb = xy[2 * q + 1];
    if ((ya <= cy && cy < yb) || (yb <= cy && cy < ya)) {
      const double x = xa + (cy - ya) * (xb - xa) / (yb - ya);
      if (x <= cx) inside = !inside;
    }
  }
  return inside;
}

std::vector<uint8_t> FilledPolygonMask(const std::vector<double>& xy, uint32_t height,
                                       uint32_t width) {
  std::vector<uint8_t> mask(size_t{height} * width, 0);
  FillPolygon(xy, height, width, absl::MakeSpan(mask));
  return mask;
}

TEST(CocoMasksTest, AnIntegerRectangleFillsExactlyItsBoxPixels) {
  const std::vector<uint8_t> mask = FilledPolygonMask({2, 1, 5, 1, 5, 3, 2, 3}, 4, 6);
  EXPECT_THAT(mask, ElementsAre(0, 0, 0, 0, 0, 0,  //
                                0, 0, 1, 1, 1, 0,  //
                                0, 0, 1, 1, 1, 0,  //
                                0, 0, 0, 0, 0, 0));
}

TEST(CocoMasksTest, PolygonsFillThePixelsWhoseCentresAreInside) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> quarter(0, 4 * 24);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> xy;
    const int points = 3 + trial % 4;  // Triangles to hexagons, self-crossing ones included.
    for (int p = 0; p < 2 * points; ++p) xy.push_back(quarter(rng) / 4.0);
    const std::vector<uint8_t> mask = FilledPolygonMask(xy, 24, 24);
    for (int y = 0; y < 24; ++y) {
      for (int x = 0; x < 24; ++x) {
        ASSERT_EQ(mask[y * 24 + x], CentreInsideByRayCast(xy, x + 0.5, y + 0.5) ? 1 : 0)
            << "trial " << trial << " pixel (" << x << ", " << y << ")";
      }
    }
  }
}

TEST(CocoMasksTest, PolygonsSharingAnEdgeShareNoPixelAndCoverTheirUnion) {
  // A rectangle cut along its diagonal, through pixel centres.
  const std::vector<uint8_t> upper = FilledPolygonMask({0, 0, 8, 0, 8, 8}, 8, 8);
  const std::vector<uint8_t> lower = FilledPolygonMask({0, 0, 8, 8, 0, 8}, 8, 8);
  for (size_t i = 0; i < upper.size(); ++i) {
    EXPECT_EQ(upper[i] + lower[i], 1) << "pixel " << i;
  }
}

TEST(CocoMasksTest, CompressedCountsMatchPycocotoolsEncoding) {
  // Worked by hand through rleToString: 3, 5, 100 (two groups), then 2 - 5 = -3 (negative).
  EXPECT_EQ(EncodeCocoRleString({3, 5, 100, 2}), "35T3M");
  absl::StatusOr<std::vector<uint32_t>> counts = DecodeCocoRleString("35T3M");
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_THAT(*counts, ElementsAre(3, 5, 100, 2));
  std::mt19937 rng(3);
  std::vector<uint32_t> random(300);
  for (uint32_t& count : random) count = rng() % (rng() % 2 == 0 ? 40 : 4000000000u);
  counts = DecodeCocoRleString(EncodeCocoRleString(random));
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(*counts, random);
}

TEST(CocoMasksTest, CompressedCountsPycocotoolsWouldNotWriteAreRefused) {
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"3!", "character 1 is outside COCO's alphabet"},
           {"3T", "the string ends inside count 1"},
           {"ooooooo0", "count 0 runs over 32 bits"},
           {"M", "count 0 is -3, outside 0..2^32-1"}}) {
    const absl::Status status = DecodeCocoRleString(text).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(status.message(), HasSubstr(message)) << text;
  }
}

TEST(CocoMasksTest, RunLengthsAreColumnMajor) {
  // 2 rows × 3 columns: one 0, two 1s, three 0s, down the columns.
  std::vector<uint8_t> mask(6, 9);
  ASSERT_TRUE(CocoRleToMask({1, 2, 3}, 2, 3, absl::MakeSpan(mask)).ok());
  EXPECT_THAT(mask, ElementsAre(0, 1, 0,  //
                                1, 0, 0));
  EXPECT_THAT(MaskToCocoRle(mask, 2, 3), ElementsAre(1, 2, 3));
  EXPECT_THAT(MaskToCocoRle(std::vector<uint8_t>{1, 1, 1, 1}, 2, 2), ElementsAre(0, 4));
}

TEST(CocoMasksTest, RunLengthsThatDoNotCoverTheMaskAreRefused) {
  std::vector<uint8_t> mask(6);
  absl::Status status = CocoRleToMask({1, 2, 4}, 2, 3, absl::MakeSpan(mask));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("counts run past the 2x3 mask at count 2"));
  status = CocoRleToMask({1, 2}, 2, 3, absl::MakeSpan(mask));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("counts sum to 3, not 2x3 = 6"));
}

}  // namespace
}  // namespace stoker
