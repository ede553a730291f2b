// ResizeLinearRgb against cv::resize(INTER_LINEAR), which it must equal byte for byte, in each
// of its builds (SSSE3, AVX2, AVX-512) that this CPU can run.

#include "augment/kernels/resize_linear_rgb.h"

#include <cstdint>
#include <vector>

#include "common/counter_rng.h"
#include "gtest/gtest.h"
#include "opencv2/core.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

constexpr ImageShape Rgb(uint32_t height, uint32_t width) {
  return ImageShape{height, width, 3, PixelType::kUint8};
}

// cv::resize of `region` of `in` into a fresh image of `out` shape.
std::vector<uint8_t> OpenCvResize(const ImageView& in, const PixelRect& region,
                                  const ImageShape& out) {
  const cv::Mat src(static_cast<int>(in.shape.height), static_cast<int>(in.shape.width), CV_8UC3,
                    in.data);
  std::vector<uint8_t> pixels(out.elements());
  cv::Mat dst(static_cast<int>(out.height), static_cast<int>(out.width), CV_8UC3, pixels.data());
  cv::resize(src(cv::Rect(static_cast<int>(region.left), static_cast<int>(region.top),
                          static_cast<int>(region.width), static_cast<int>(region.height))),
             dst, dst.size(), 0, 0, cv::INTER_LINEAR);
  return pixels;
}

using resize_internal::LinearRgbIsa;

class ResizeLinearRgbTest : public testing::TestWithParam<LinearRgbIsa> {
 protected:
  void SetUp() override {
    if (!resize_internal::CpuSupports(GetParam())) GTEST_SKIP() << "this CPU lacks the build";
  }

  std::vector<uint8_t> Resized(const ImageView& in, const PixelRect& region,
                               const ImageShape& out) const {
    std::vector<uint8_t> pixels(out.elements());
    resize_internal::ResizeLinearRgbWith(GetParam(), in, region, ImageView{pixels.data(), out});
    return pixels;
  }
};

INSTANTIATE_TEST_SUITE_P(Builds, ResizeLinearRgbTest,
                         testing::Values(LinearRgbIsa::kAvx512, LinearRgbIsa::kAvx2,
                                         LinearRgbIsa::kSsse3));

TEST_P(ResizeLinearRgbTest, EqualsOpenCvOnRandomWindowsAndSizes) {
  CounterRng rng(2026);
  for (int trial = 0; trial < 400; ++trial) {
    const ImageShape shape = Rgb(1 + rng.UniformInt(120), 1 + rng.UniformInt(120));
    std::vector<uint8_t> pixels(shape.elements());
    for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng.UniformInt(256));
    const ImageView in{pixels.data(), shape};
    PixelRect region;
    region.height = 1 + static_cast<uint32_t>(rng.UniformInt(shape.height));
    region.width = 1 + static_cast<uint32_t>(rng.UniformInt(shape.width));
    // Every third window touches the bottom-right corner, where the 8-byte loads must stop.
    region.top = trial % 3 == 0
                     ? shape.height - region.height
                     : static_cast<uint32_t>(rng.UniformInt(shape.height - region.height + 1));
    region.left = trial % 3 == 0
                      ? shape.width - region.width
                      : static_cast<uint32_t>(rng.UniformInt(shape.width - region.width + 1));
    const ImageShape out = Rgb(1 + rng.UniformInt(90), 1 + rng.UniformInt(90));
    if (!ResizeLinearRgbApplies(shape, region, out)) continue;
    ASSERT_EQ(Resized(in, region, out), OpenCvResize(in, region, out))
        << "trial " << trial << ": " << region.width << "x" << region.height << " at ("
        << region.left << ", " << region.top << ") of " << shape.width << "x" << shape.height
        << " to " << out.width << "x" << out.height;
  }
}

// The JPEG pipelines' case: windows of a 500x375 photo (and its span) to 224x224, up and down.
TEST_P(ResizeLinearRgbTest, EqualsOpenCvForRandomResizedCropSizes) {
  CounterRng rng(13);
  const ImageShape shape = Rgb(375, 500);
  std::vector<uint8_t> pixels(shape.elements());
  for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng.UniformInt(256));
  const ImageView in{pixels.data(), shape};
  const PixelRect windows[] = {{0, 0, 375, 500},   {10, 20, 100, 120},  {0, 276, 375, 224},
                               {151, 0, 224, 224}, {300, 400, 75, 100}, {1, 1, 373, 497}};
  for (const PixelRect& window : windows) {
    ASSERT_EQ(Resized(in, window, Rgb(224, 224)), OpenCvResize(in, window, Rgb(224, 224)))
        << window.width << "x" << window.height << " at (" << window.left << ", " << window.top
        << ")";
  }
}

TEST(ResizeLinearRgbAppliesTest, LeavesExactHalvingAndOtherPixelTypesToOpenCv) {
  const ImageShape in = Rgb(448, 448);
  EXPECT_FALSE(ResizeLinearRgbApplies(in, PixelRect{0, 0, 448, 448}, Rgb(224, 224)));
  EXPECT_TRUE(ResizeLinearRgbApplies(in, PixelRect{0, 0, 448, 447}, Rgb(224, 224)));
  EXPECT_FALSE(ResizeLinearRgbApplies(ImageShape{8, 8, 1, PixelType::kUint8}, PixelRect{0, 0, 8, 8},
                                      ImageShape{4, 5, 1, PixelType::kUint8}));
  EXPECT_FALSE(ResizeLinearRgbApplies(ImageShape{8, 8, 3, PixelType::kFloat32},
                                      PixelRect{0, 0, 8, 8},
                                      ImageShape{4, 5, 3, PixelType::kFloat32}));
}

// The default entry point uses the best build and gives the same bytes.
TEST(ResizeLinearRgbDefaultTest, EqualsOpenCvForRandomResizedCropSizes) {
  CounterRng rng(7);
  const ImageShape shape = Rgb(375, 500);
  std::vector<uint8_t> pixels(shape.elements());
  for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng.UniformInt(256));
  const ImageView in{pixels.data(), shape};
  const PixelRect window{17, 33, 301, 287};
  std::vector<uint8_t> out(Rgb(224, 224).elements());
  ResizeLinearRgb(in, window, ImageView{out.data(), Rgb(224, 224)});
  EXPECT_EQ(out, OpenCvResize(in, window, Rgb(224, 224)));
}

}  // namespace
}  // namespace stoker
