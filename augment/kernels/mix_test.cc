// MixUp / CutMix kernels against an out-of-place reference of torchvision v2's formulation:
// rolled = x.roll(1, 0); mixup: rolled * (1 - lam) + x * lam; cutmix: x with
// [..., y1:y2, x1:x2] taken from rolled.
#include "augment/kernels/mix.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;

// A batch of `n` random samples of `image`, as bytes.
std::vector<uint8_t> RandomBatch(size_t n, const ImageShape& image, uint64_t key) {
  CounterRng rng(key);
  std::vector<uint8_t> bytes(n * image.bytes());
  if (image.type == PixelType::kUint8) {
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng.UniformInt(256));
  } else {
    float* f = reinterpret_cast<float*>(bytes.data());
    for (size_t i = 0; i < n * image.elements(); ++i) f[i] = rng.UniformFloat(-2.0f, 2.0f);
  }
  return bytes;
}

// x.roll(1, 0): sample i of the result is sample i-1 (sample 0 the last).
std::vector<uint8_t> Rolled(const std::vector<uint8_t>& batch, size_t n) {
  const size_t sample = batch.size() / n;
  std::vector<uint8_t> rolled(batch.size());
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(rolled.data() + i * sample, batch.data() + ((i + n - 1) % n) * sample, sample);
  }
  return rolled;
}

TEST(MixupBatchTest, FloatEqualsTorchvisionFormula) {
  const ImageShape image{5, 7, 3, PixelType::kFloat32};
  for (size_t n : {1u, 2u, 5u}) {
    std::vector<uint8_t> batch = RandomBatch(n, image, n);
    const std::vector<uint8_t> rolled = Rolled(batch, n);
    std::vector<float> expected(n * image.elements());
    const double lam = 0.3141592653589793;
    const float* x = reinterpret_cast<const float*>(batch.data());
    const float* r = reinterpret_cast<const float*>(rolled.data());
    for (size_t k = 0; k < expected.size(); ++k) {
      expected[k] = r[k] * static_cast<float>(1.0 - lam) + x[k] * static_cast<float>(lam);
    }
    ImageBuffer scratch;
    MixupBatch(BatchTensorView{batch.data(), n, image, false}, lam, &scratch);
    const float* got = reinterpret_cast<const float*>(batch.data());
    for (size_t k = 0; k < expected.size(); ++k) ASSERT_EQ(got[k], expected[k]) << n << " " << k;
  }
}

TEST(MixupBatchTest, Uint8RoundsHalfToEven) {
  const ImageShape image{1, 1, 2, PixelType::kUint8};
  std::vector<uint8_t> batch = {10, 200, 11, 0};  // two samples of two values
  ImageBuffer scratch;
  MixupBatch(BatchTensorView{batch.data(), 2, image, false}, 0.5, &scratch);
  // 0.5 * 10 + 0.5 * 11 = 10.5 → 10; 0.5 * 200 + 0 = 100; both samples get the same mix.
  EXPECT_THAT(batch, ElementsAre(10, 100, 10, 100));
}

TEST(CutmixBatchTest, PastesThePreviousSampleInBothLayouts) {
  for (bool chw : {false, true}) {
    for (PixelType type : {PixelType::kUint8, PixelType::kFloat32}) {
      const ImageShape image{6, 9, 3, type};
      const size_t n = 4;
      std::vector<uint8_t> batch = RandomBatch(n, image, 7);
      const std::vector<uint8_t> original = batch;
      const std::vector<uint8_t> rolled = Rolled(batch, n);
      const PixelRect box{/*top=*/1, /*left=*/2, /*height=*/3, /*width=*/5};
      ImageBuffer scratch;
      CutmixBatch(BatchTensorView{batch.data(), n, image, chw}, box, &scratch);
      const size_t px = PixelTypeSize(type);
      for (size_t i = 0; i < n; ++i) {
        for (uint32_t c = 0; c < 3; ++c) {
          for (uint32_t y = 0; y < 6; ++y) {
            for (uint32_t x = 0; x < 9; ++x) {
              const size_t element = chw ? (c * 6 + y) * 9 + x : (y * 9 + x) * 3 + c;
              const size_t offset = i * image.bytes() + element * px;
              const bool inside = y >= 1 && y < 4 && x >= 2 && x < 7;
              const std::vector<uint8_t>& want = inside ? rolled : original;
              ASSERT_EQ(std::memcmp(batch.data() + offset, want.data() + offset, px), 0)
                  << "chw=" << chw << " sample " << i << " c" << c << " y" << y << " x" << x;
            }
          }
        }
      }
    }
  }
}

TEST(MixLabelsTest, WeightsOwnAndPreviousLabel) {
  std::vector<float> out(3 * 4);
  MixLabels({2, 0, 0}, 4, 0.75, out.data());
  EXPECT_THAT(out, ElementsAre(0.25f, 0.0f, 0.75f, 0.0f,  // own 2, previous (last) 0
                               0.75f, 0.0f, 0.25f, 0.0f,  // own 0, previous 2
                               1.0f, 0.0f, 0.0f, 0.0f));  // own 0, previous 0
}

}  // namespace
}  // namespace stoker
