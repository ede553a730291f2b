// The vector builds of the uint8 antialiased resize (resize_antialias_variants.h) against the
// portable build (the scalar horizontal pass, equal to PIL's Image.resize: checked against PIL by
// tests/python/augment_equivalence_test.py), byte for byte: photographs (skimage's sample images,
// Debian's python3-skimage) under random_resized_crop-like windows, windows touching the input's
// last bytes (where the vector pass hands rows to the scalar one), shrinking and enlarging,
// 1 to 4 channels, saturated pixels. Compiled twice: resize_antialias_test checks the AVX2 build
// and the public entry point, resize_antialias_avx512_test (STOKER_TEST_AVX512) the AVX-512 build;
// each is skipped (exit 77, shown as skipped) where the CPU lacks what its build needs.

#include "augment/kernels/resize_antialias_variants.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/kernels/decode.h"
#include "augment/kernels/resize_antialias.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using resize_internal::Uint8Resample;
using ResampleFn = void (*)(const Uint8Resample&);

struct Variant {
  const char* name;
  ResampleFn resample;
  bool (*supported)();
};

#if defined(STOKER_TEST_AVX512)
const Variant kTested{"AVX-512 (BW, VNNI)", &resize_internal::ResampleUint8Avx512,
                      &resize_internal::CpuHasAvx512Vnni};
#else
const Variant kTested{"AVX2", &resize_internal::ResampleUint8Avx2, &resize_internal::CpuHasAvx2};
#endif

// `region` of `in` resized to out_h × out_w by `resample`, into a fresh buffer.
std::vector<uint8_t> Resample(ResampleFn resample, const ImageView& in, const PixelRect& region,
                              uint32_t out_h, uint32_t out_w) {
  resize_internal::AxisWeights horizontal, vertical;
  resize_internal::ComputeAxisWeights(static_cast<int>(region.width), static_cast<int>(out_w),
                                      &horizontal);
  resize_internal::ComputeAxisWeights(static_cast<int>(region.height), static_cast<int>(out_h),
                                      &vertical);
  std::vector<uint8_t> temp;
  std::vector<int32_t> acc;
  std::vector<uint8_t> pixels(size_t{out_h} * out_w * in.shape.channels, 0xab);
  const ImageView out{pixels.data(), ImageShape{out_h, out_w, in.shape.channels, in.shape.type}};
  resample(Uint8Resample{&in, &region, &horizontal, &vertical, &temp, &acc, &out});
  return pixels;
}

// The tested build and the portable one give the same bytes.
void ExpectSameAsPortable(const ImageView& in, const PixelRect& region, uint32_t out_h,
                          uint32_t out_w, const std::string& label) {
  const std::vector<uint8_t> expected =
      Resample(&resize_internal::ResampleUint8Portable, in, region, out_h, out_w);
  const std::vector<uint8_t> got = Resample(kTested.resample, in, region, out_h, out_w);
  ASSERT_EQ(got.size(), expected.size());
  const auto mismatch = std::mismatch(got.begin(), got.end(), expected.begin());
  EXPECT_TRUE(mismatch.first == got.end())
      << kTested.name << " differs from the portable build at byte "
      << (mismatch.first - got.begin()) << ": " << label << " (region " << region.top << ","
      << region.left << " " << region.height << "x" << region.width << " of " << in.shape.height
      << "x" << in.shape.width << "x" << in.shape.channels << " -> " << out_h << "x" << out_w
      << ")";
}

// torchvision's RandomResizedCrop window (scale 0.08..1, ratio 3/4..4/3), or the whole image.
PixelRect RrcWindow(const ImageShape& shape, CounterRng* rng) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double area =
        static_cast<double>(shape.height) * shape.width * rng->UniformFloat(0.08f, 1.0f);
    const double ratio = std::exp(rng->UniformFloat(std::log(0.75f), std::log(4.0f / 3.0f)));
    const auto w = static_cast<uint32_t>(std::lround(std::sqrt(area * ratio)));
    const auto h = static_cast<uint32_t>(std::lround(std::sqrt(area / ratio)));
    if (w > 0 && w <= shape.width && h > 0 && h <= shape.height) {
      const auto top = static_cast<uint32_t>(rng->UniformInt(uint64_t{shape.height} - h + 1));
      const auto left = static_cast<uint32_t>(rng->UniformInt(uint64_t{shape.width} - w + 1));
      return PixelRect{top, left, h, w};
    }
  }
  return PixelRect{0, 0, shape.height, shape.width};
}

// A skimage photograph decoded to `channels` (1 or 3); empty (and a test failure) when missing.
std::vector<uint8_t> Photo(const std::string& name, uint32_t channels, ImageShape* shape) {
  const std::string path = std::string(STOKER_SKIMAGE_DATA_DIR) + "/" + name;
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path
                           << " (python3-skimage, installed by scripts/install-deps.sh)";
  const std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(file), {});
  ImageDecoder decoder;
  const absl::StatusOr<EncodedHeader> header =
      decoder.ReadHeader(bytes, DecodeLimits{kDecodeDefaultMaxPixels, kDecodeDefaultMaxScans});
  EXPECT_TRUE(header.ok()) << path << ": " << header.status();
  if (!header.ok()) return {};
  *shape = ScaledSize(*header, 1, channels);
  std::vector<uint8_t> pixels(shape->elements());
  const absl::Status status = decoder.Decode(bytes, ImageView{pixels.data(), *shape});
  EXPECT_TRUE(status.ok()) << path << ": " << status;
  return pixels;
}

class ResizeAntialiasVariantTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kTested.supported()) GTEST_SKIP() << "this CPU (or build) lacks " << kTested.name;
  }
};

TEST_F(ResizeAntialiasVariantTest, PhotosUnderRandomResizedCropWindows) {
  for (const char* name : {"chelsea.png", "astronaut.png", "coffee.png", "camera.png"}) {
    for (uint32_t channels : {3u, 1u}) {
      ImageShape shape;
      std::vector<uint8_t> pixels = Photo(name, channels, &shape);
      if (pixels.empty()) continue;
      const ImageView in{pixels.data(), shape};
      CounterRng rng(std::string(name).size() * 10 + channels);
      for (int i = 0; i < 40; ++i) {
        ExpectSameAsPortable(in, RrcWindow(shape, &rng), 224, 224, absl::StrCat(name, " rrc ", i));
      }
      // The whole photo and its bottom-right corner, to sizes that shrink, enlarge and are odd.
      const PixelRect corner{shape.height / 3, shape.width / 2, shape.height - shape.height / 3,
                             shape.width - shape.width / 2};
      for (const PixelRect& region : {PixelRect{0, 0, shape.height, shape.width}, corner}) {
        for (const auto& [h, w] : {std::pair{224u, 224u},
                                   {1u, 1u},
                                   {7u, 5u},
                                   {97u, 333u},
                                   {shape.height * 2 + 1, shape.width + 3}}) {
          ExpectSameAsPortable(in, region, h, w, name);
        }
      }
    }
  }
}

TEST_F(ResizeAntialiasVariantTest, EveryChannelCountEdgeSizesAndSaturatedPixels) {
  CounterRng rng(7);
  for (uint32_t channels = 1; channels <= 4; ++channels) {
    for (const auto& [height, width] :
         {std::pair{1u, 1u}, {2u, 9u}, {9u, 2u}, {5u, 17u}, {31u, 7u}, {64u, 64u}, {113u, 129u}}) {
      const ImageShape shape{height, width, channels, PixelType::kUint8};
      std::vector<uint8_t> pixels(shape.elements());
      for (bool saturated : {false, true}) {
        // Saturated: only 0 and 255, so sums reach both ends of Pillow's clip.
        for (uint8_t& p : pixels) {
          p = static_cast<uint8_t>(saturated ? 255 * rng.UniformInt(2) : rng.UniformInt(256));
        }
        const ImageView in{pixels.data(), shape};
        for (int i = 0; i < 12; ++i) {
          const auto h = static_cast<uint32_t>(1 + rng.UniformInt(height));
          const auto w = static_cast<uint32_t>(1 + rng.UniformInt(width));
          // Every other window ends at the input's last byte.
          const PixelRect region =
              i % 2 ? PixelRect{height - h, width - w, h, w}
                    : PixelRect{static_cast<uint32_t>(rng.UniformInt(height - h + 1)),
                                static_cast<uint32_t>(rng.UniformInt(width - w + 1)), h, w};
          for (const auto& [out_h, out_w] : {std::pair{h, w},
                                             {1u, 1u},
                                             {h * 3 + 1, w * 2 + 1},
                                             {(h + 9) / 10, (w + 9) / 10},
                                             {static_cast<uint32_t>(1 + rng.UniformInt(80)),
                                              static_cast<uint32_t>(1 + rng.UniformInt(80))}}) {
            ExpectSameAsPortable(in, region, out_h, out_w,
                                 absl::StrCat(channels, " channels, saturated ", saturated));
          }
        }
      }
    }
  }
}

#if !defined(STOKER_TEST_AVX512)
// The public entry point (whichever build it picks on this CPU) gives the portable build's bytes.
TEST_F(ResizeAntialiasVariantTest, ResizeAntialiasedEqualsThePortableBuild) {
  ImageShape shape;
  std::vector<uint8_t> pixels = Photo("chelsea.png", 3, &shape);
  ASSERT_FALSE(pixels.empty());
  const ImageView in{pixels.data(), shape};
  CounterRng rng(3);
  for (int i = 0; i < 10; ++i) {
    const PixelRect region = RrcWindow(shape, &rng);
    std::vector<uint8_t> out(224 * 224 * 3);
    ResizeAntialiased(in, region, ImageView{out.data(), ImageShape{224, 224, 3, shape.type}});
    EXPECT_EQ(out, Resample(&resize_internal::ResampleUint8Portable, in, region, 224, 224));
  }
}
#endif

}  // namespace
}  // namespace stoker
