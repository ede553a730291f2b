// Colour and resize kernels on known inputs.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "augment/kernels/color.h"
#include "augment/kernels/resize.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(GrayscaleTest, TorchvisionWeightsAndUint8Truncation) {
  std::vector<float> rgb = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::vector<float> gray(3);
  Grayscale(ImageView{rgb.data(), {1, 3, 3, PixelType::kFloat32}},
            ImageView{gray.data(), {1, 3, 1, PixelType::kFloat32}});
  EXPECT_FLOAT_EQ(gray[0], 0.2989f);
  EXPECT_FLOAT_EQ(gray[1], 0.587f);
  EXPECT_FLOAT_EQ(gray[2], 0.114f);
  // White in uint8: 0.9999 * 255 = 254.97, truncated like torchvision's .to(uint8). In place,
  // replicated to three channels.
  std::vector<uint8_t> white = {255, 255, 255, 10, 20, 30};
  const ImageView view{white.data(), {1, 2, 3, PixelType::kUint8}};
  Grayscale(view, view);
  EXPECT_EQ(white, (std::vector<uint8_t>{254, 254, 254, 18, 18, 18}));  // 18.19 → 18.
}

TEST(ColorAdjustTest, BrightnessScalesAndClamps) {
  std::vector<uint8_t> pixels = {100, 200, 0};
  const ImageView view{pixels.data(), {1, 1, 3, PixelType::kUint8}};
  AdjustBrightness(view, 1.5f, view);
  EXPECT_EQ(pixels, (std::vector<uint8_t>{150, 255, 0}));
  std::vector<float> f = {0.5f, 0.8f, 0.1f};
  AdjustBrightness(ImageView{f.data(), {1, 1, 3, PixelType::kFloat32}}, 2.0f,
                   ImageView{f.data(), {1, 1, 3, PixelType::kFloat32}});
  EXPECT_FLOAT_EQ(f[0], 1.0f);
  EXPECT_FLOAT_EQ(f[2], 0.2f);
}

TEST(ColorAdjustTest, ContrastBlendsWithTheMeanGray) {
  // Black and white pixels: mean gray (0 + 0.9999) / 2.
  std::vector<float> f = {0, 0, 0, 1, 1, 1};
  const ImageView view{f.data(), {1, 2, 3, PixelType::kFloat32}};
  std::vector<float> out(6);
  AdjustContrast(view, 0.0f, ImageView{out.data(), view.shape});
  for (float v : out) EXPECT_NEAR(v, 0.49995f, 1e-6);
  AdjustContrast(view, 1.0f, ImageView{out.data(), view.shape});
  EXPECT_EQ(out, f);
}

TEST(ColorAdjustTest, SaturationZeroIsGrayOneIsIdentity) {
  std::vector<float> f = {1, 0, 0};
  const ImageView view{f.data(), {1, 1, 3, PixelType::kFloat32}};
  std::vector<float> out(3);
  AdjustSaturation(view, 0.0f, ImageView{out.data(), view.shape});
  for (float v : out) EXPECT_FLOAT_EQ(v, 0.2989f);
  AdjustSaturation(view, 1.0f, ImageView{out.data(), view.shape});
  EXPECT_EQ(out, f);
}

// The uint8 fast paths (table for brightness/contrast, planes for saturation) against
// torchvision's formula written out per value: _blend(img, other, f) =
// (f * img + (1 - f) * other).clamp(0, 255).to(uint8), other = the pixel's truncated gray.
TEST(ColorAdjustTest, Uint8FastPathsEqualTheFormula) {
  const ImageShape shape{7, 41, 3, PixelType::kUint8};  // 287 pixels: chunks and a tail
  std::vector<uint8_t> image(shape.elements());
  uint32_t state = 12345;
  for (uint8_t& v : image) v = static_cast<uint8_t>((state = state * 1103515245u + 12345u) >> 24);
  auto blend = [](uint8_t x, float other, float f) {
    const float v = f * static_cast<float>(x) + (1.0f - f) * other;
    return static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
  };
  for (float factor : {0.0f, 0.37f, 1.0f, 1.4f, 3.0f}) {
    std::vector<uint8_t> out(image.size());
    AdjustSaturation(ImageView{image.data(), shape}, factor, ImageView{out.data(), shape});
    for (size_t i = 0; i < image.size() / 3; ++i) {
      const uint8_t* p = &image[i * 3];
      const float gray =
          static_cast<float>(static_cast<uint8_t>(0.2989f * p[0] + 0.587f * p[1] + 0.114f * p[2]));
      for (int c = 0; c < 3; ++c) ASSERT_EQ(out[i * 3 + c], blend(p[c], gray, factor)) << i;
    }
    std::vector<uint8_t> bright(image.size());
    AdjustBrightness(ImageView{image.data(), shape}, factor, ImageView{bright.data(), shape});
    for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(bright[i], blend(image[i], 0.0f, factor));
  }
}

TEST(ResizeTest, AreaHalvesByAveragingAndBilinearKeepsConstants) {
  std::vector<float> in = {0, 2, 4, 6, 0, 2, 4, 6};  // 2 × 4, one channel.
  std::vector<float> out(2);
  ASSERT_TRUE(Resize(ImageView{in.data(), {2, 4, 1, PixelType::kFloat32}}, PixelRect{0, 0, 2, 4},
                     Interpolation::kArea, ImageView{out.data(), {1, 2, 1, PixelType::kFloat32}})
                  .ok());
  EXPECT_EQ(out, (std::vector<float>{1, 5}));
  std::vector<uint8_t> constant(6 * 6 * 3, 77), enlarged(9 * 10 * 3);
  ASSERT_TRUE(Resize(ImageView{constant.data(), {6, 6, 3, PixelType::kUint8}},
                     PixelRect{1, 2, 4, 3}, Interpolation::kBilinear,
                     ImageView{enlarged.data(), {9, 10, 3, PixelType::kUint8}})
                  .ok());
  for (uint8_t v : enlarged) EXPECT_EQ(v, 77);
}

TEST(ResizeTest, RegionIsRespected) {
  // A 1:1 "resize" of a window is a crop.
  std::vector<uint8_t> in(4 * 5);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i);
  std::vector<uint8_t> out(2 * 2);
  ASSERT_TRUE(Resize(ImageView{in.data(), {4, 5, 1, PixelType::kUint8}}, PixelRect{1, 2, 2, 2},
                     Interpolation::kBilinear, ImageView{out.data(), {2, 2, 1, PixelType::kUint8}})
                  .ok());
  EXPECT_EQ(out, (std::vector<uint8_t>{7, 8, 12, 13}));
}

}  // namespace
}  // namespace stoker
