// Tests of the small kernels: to_float, crop, flip, normalize, output conversion.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "augment/kernels/convert.h"
#include "augment/kernels/geometry.h"
#include "augment/kernels/normalize.h"
#include "augment/kernels/to_float.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "image/image.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

template <typename T>
ImageView View(std::vector<T>& v, uint32_t h, uint32_t w, uint32_t c) {
  return ImageView{v.data(),
                   ImageShape{h, w, c, sizeof(T) == 1 ? PixelType::kUint8 : PixelType::kFloat32}};
}

TEST(ToFloatTest, DividesBy255) {
  std::vector<uint8_t> in = {0, 1, 128, 255, 51, 204};
  std::vector<float> out(6);
  ToFloat(View(in, 1, 2, 3), View(out, 1, 2, 3));
  EXPECT_THAT(out, ElementsAre(0.0f, 1.0f / 255.0f, 128.0f / 255.0f, 1.0f, 0.2f, 0.8f));
}

TEST(CropTest, CopiesWindowUint8ThreeChannels) {
  // 3x4 image, pixel (y, x) has channels (10y+x, 100+10y+x, 200+x).
  std::vector<uint8_t> in;
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 4; ++x) {
      in.push_back(static_cast<uint8_t>(10 * y + x));
      in.push_back(static_cast<uint8_t>(100 + 10 * y + x));
      in.push_back(static_cast<uint8_t>(200 + x));
    }
  }
  std::vector<uint8_t> out(2 * 2 * 3);
  Crop(View(in, 3, 4, 3), 1, 2, View(out, 2, 2, 3));
  EXPECT_THAT(out, ElementsAre(12, 112, 202, 13, 113, 203, 22, 122, 202, 23, 123, 203));
}

TEST(CropTest, FullWindowIsCopyFloat) {
  std::vector<float> in = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(6);
  Crop(View(in, 2, 3, 1), 0, 0, View(out, 2, 3, 1));
  EXPECT_EQ(out, in);
}

TEST(HorizontalFlipTest, MirrorsRowsOutOfPlace) {
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 2x3, 2 channels.
  std::vector<float> out(12);
  HorizontalFlip(View(in, 2, 3, 2), View(out, 2, 3, 2));
  EXPECT_THAT(out, ElementsAre(5, 6, 3, 4, 1, 2, 11, 12, 9, 10, 7, 8));
}

// Widths around the 16-pixel blocks of the SSSE3 flip of 3-byte pixels (pairs of blocks from
// both ends, then a middle of up to 31 pixels), and the JPEG pipelines' 224.
TEST(HorizontalFlipTest, MirrorsInPlaceForSeveralPixelSizes) {
  for (uint32_t channels : {1u, 2u, 3u, 4u, 5u}) {
    for (uint32_t width :
         {1u, 2u, 5u, 6u, 15u, 16u, 17u, 31u, 32u, 33u, 47u, 48u, 49u, 63u, 64u, 65u, 97u, 224u}) {
      std::vector<uint8_t> image(size_t{2} * width * channels);
      for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i);
      std::vector<uint8_t> expected(image.size());
      HorizontalFlip(View(image, 2, width, channels), View(expected, 2, width, channels));
      for (uint32_t y = 0; y < 2; ++y) {
        for (uint32_t x = 0; x < width; ++x) {
          for (uint32_t c = 0; c < channels; ++c) {
            ASSERT_EQ(expected[(y * width + x) * channels + c],
                      image[(y * width + (width - 1 - x)) * channels + c]);
          }
        }
      }
      HorizontalFlip(View(image, 2, width, channels), View(image, 2, width, channels));
      EXPECT_EQ(image, expected) << "channels " << channels << " width " << width;
    }
  }
}

TEST(VerticalFlipTest, MirrorsRowsOutOfPlaceAndInPlaceForOddAndEvenHeights) {
  for (uint32_t height : {1u, 2u, 3u, 6u}) {
    std::vector<uint8_t> image(size_t{height} * 2 * 3);  // height x 2, 3 channels.
    for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i);
    std::vector<uint8_t> flipped(image.size());
    VerticalFlip(View(image, height, 2, 3), View(flipped, height, 2, 3));
    for (uint32_t y = 0; y < height; ++y) {
      for (size_t i = 0; i < 6; ++i) ASSERT_EQ(flipped[y * 6 + i], image[(height - 1 - y) * 6 + i]);
    }
    VerticalFlip(View(image, height, 2, 3), View(image, height, 2, 3));
    EXPECT_EQ(image, flipped) << "height " << height;
  }
}

TEST(NormalizeTest, PerChannelOutOfPlaceAndInPlace) {
  std::vector<float> in = {1, 2, 3, 4, 5, 6};  // 1x2, 3 channels.
  const float mean[3] = {1, 2, 3};
  const float inv_std[3] = {1, 0.5f, 0.25f};
  std::vector<float> mean_row(6), inv_std_row(6), out(6);
  RepeatPerChannel(mean, 3, 2, mean_row.data());
  RepeatPerChannel(inv_std, 3, 2, inv_std_row.data());
  EXPECT_THAT(mean_row, ElementsAre(1, 2, 3, 1, 2, 3));
  Normalize(View(in, 1, 2, 3), mean_row.data(), inv_std_row.data(), View(out, 1, 2, 3));
  EXPECT_THAT(out, ElementsAre(0, 0, 0, 3, 1.5f, 0.75f));
  Normalize(View(in, 1, 2, 3), mean_row.data(), inv_std_row.data(), View(in, 1, 2, 3));
  EXPECT_EQ(in, out);
}

TEST(ConvertImageTest, HwcSameTypeCopies) {
  std::vector<uint8_t> in = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> out(6);
  ConvertImage(View(in, 1, 2, 3), OutputLayout::kHwc, PixelType::kUint8, out.data());
  EXPECT_EQ(out, in);
}

TEST(ConvertImageTest, ChwTransposes) {
  std::vector<uint8_t> in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 2x2, 3 channels.
  std::vector<uint8_t> out(12);
  ConvertImage(View(in, 2, 2, 3), OutputLayout::kChw, PixelType::kUint8, out.data());
  EXPECT_THAT(out, ElementsAre(1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12));
  std::vector<float> fin(in.begin(), in.end());
  std::vector<float> fout(12);
  ConvertImage(View(fin, 2, 2, 3), OutputLayout::kChw, PixelType::kFloat32, fout.data());
  EXPECT_THAT(fout, ElementsAre(1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12));
}

TEST(ConvertImageTest, Uint8ToFloatIsAPlainCast) {
  std::vector<uint8_t> in = {0, 7, 255, 128};
  std::vector<float> out(4);
  ConvertImage(View(in, 1, 4, 1), OutputLayout::kHwc, PixelType::kFloat32, out.data());
  EXPECT_THAT(out, ElementsAre(0.0f, 7.0f, 255.0f, 128.0f));
  std::vector<float> chw(4);
  ConvertImage(View(in, 1, 2, 2), OutputLayout::kChw, PixelType::kFloat32, chw.data());
  EXPECT_THAT(chw, ElementsAre(0.0f, 255.0f, 7.0f, 128.0f));
}

TEST(ConvertImageTest, FloatToUint8RoundsAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in = {-3.0f,  0.4f,   0.5f,   1.5f, 2.5f, 2.6f,
                           254.5f, 254.6f, 300.0f, nan,  inf,  -inf};
  std::vector<uint8_t> out(in.size());
  ConvertImage(View(in, 1, static_cast<uint32_t>(in.size()), 1), OutputLayout::kHwc,
               PixelType::kUint8, out.data());
  EXPECT_THAT(out, ElementsAreArray({0, 0, 0, 2, 2, 3, 254, 255, 255, 0, 255, 0}));
  std::vector<float> hwc = {0.2f, 250.7f, 9.5f, -1.0f};  // 1x2, 2 channels.
  std::vector<uint8_t> chw(4);
  ConvertImage(View(hwc, 1, 2, 2), OutputLayout::kChw, PixelType::kUint8, chw.data());
  EXPECT_THAT(chw, ElementsAre(0, 10, 251, 0));
}

}  // namespace
}  // namespace stoker
