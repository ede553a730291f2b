#ifndef STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_CHAIN_TESTING_H_
#define STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_CHAIN_TESTING_H_

// Test helper (gtest): checks one build of the fused blur chain against ToFloat and the same
// build's GaussianBlur run one blur at a time, bit for bit (gaussian_blur.h's promise), over
// chains of equal and mixed kernel sizes, uint8 and float32 input, odd sizes, images shorter
// than the kernel (down to ksize / 2 + 1 rows), one and three channels, and a scratch buffer at
// every 4-byte offset from a 64-byte boundary with a guard after its last float.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "augment/kernels/gaussian_blur.h"
#include "augment/kernels/to_float.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"
#include "image/image.h"

namespace stoker {
namespace blur_testing {

using BlurFn = void (*)(const ImageView&, const float*, int, float*, const ImageView&);
using ChainFn = void (*)(const ImageView&, const float* const*, const int*, int, float*,
                         const ImageView&);

// ToFloat (uint8 input) and then `blur` once per kernel, ping-ponging between two images.
inline std::vector<float> BlurOneByOne(BlurFn blur, const ImageView& in,
                                       const std::vector<std::vector<float>>& weights) {
  const ImageShape shape{in.shape.height, in.shape.width, in.shape.channels, PixelType::kFloat32};
  std::vector<float> a(shape.elements()), b(shape.elements());
  if (in.shape.type == PixelType::kUint8) {
    ToFloat(in, ImageView{a.data(), shape});
  } else {
    std::memcpy(a.data(), in.data, shape.bytes());
  }
  for (const std::vector<float>& w : weights) {
    const int ksize = static_cast<int>(w.size());
    std::vector<float> scratch(GaussianBlurScratchFloats(shape, ksize));
    blur(ImageView{a.data(), shape}, w.data(), ksize, scratch.data(), ImageView{b.data(), shape});
    a.swap(b);
  }
  return a;
}

// One case: `chain` on an input of `shape` (uint8 or float32) with `ksizes`, sigmas drawn.
inline void ExpectChainCase(ChainFn chain, BlurFn blur, const ImageShape& shape,
                            const std::vector<int>& ksizes, uint64_t key) {
  CounterRng rng(key);
  std::vector<uint8_t> bytes(shape.bytes());
  if (shape.type == PixelType::kUint8) {
    for (uint8_t& v : bytes) v = static_cast<uint8_t>(rng.UniformInt(256));
  } else {
    for (size_t i = 0; i < shape.elements(); ++i) {
      const float v = rng.UniformFloat();
      std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof(float));
    }
  }
  const ImageView in{bytes.data(), shape};
  std::vector<std::vector<float>> weights;
  std::vector<const float*> pointers;
  for (const int ksize : ksizes) {
    weights.emplace_back(static_cast<size_t>(ksize));
    GaussianKernel1D(ksize, rng.UniformFloat(0.1f, 2.0f), weights.back().data());
  }
  for (const std::vector<float>& w : weights) pointers.push_back(w.data());
  const std::vector<float> expected = BlurOneByOne(blur, in, weights);

  const ImageShape out_shape{shape.height, shape.width, shape.channels, PixelType::kFloat32};
  const int count = static_cast<int>(ksizes.size());
  const size_t floats = GaussianBlurChainScratchFloats(shape, ksizes.data(), count);
  constexpr size_t kGuard = 32;
  constexpr float kGuardValue = -12345.0f;
  for (size_t offset = 0; offset < 16; offset += 5) {  // Starts 0, 20, 40 and 60 bytes past 64.
    std::vector<float> storage(floats + 32 + kGuard, kGuardValue);
    const uintptr_t address = reinterpret_cast<uintptr_t>(storage.data());
    float* scratch = storage.data() + ((64 - address % 64) % 64) / sizeof(float) + offset;
    std::vector<float> out(out_shape.elements(), -1.0f);
    chain(in, pointers.data(), ksizes.data(), count, scratch, ImageView{out.data(), out_shape});
    EXPECT_EQ(std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)), 0)
        << shape.height << "x" << shape.width << "x" << shape.channels << " "
        << PixelTypeName(shape.type) << ", " << count << " blurs from ksize " << ksizes[0]
        << ", scratch offset " << offset;
    EXPECT_TRUE(std::all_of(scratch + floats, scratch + floats + kGuard, [](float v) {
      return v == kGuardValue;
    })) << "the chain wrote past GaussianBlurChainScratchFloats";
  }
}

// Every case above for one build: `chain` must equal `blur` one by one, bit for bit.
inline void ExpectChainEqualsOneByOne(ChainFn chain, BlurFn blur) {
  const std::vector<std::vector<int>> chains = {
      std::vector<int>(10, 11),            // the reference workload
      {3, 15, 5, 11, 7, 9, 13, 3},         // mixed radii, 1 to 7
      {5},                                 // one blur
      std::vector<int>(kMaxBlurChain, 7),  // the longest chain
  };
  uint64_t key = 1;
  for (const std::vector<int>& ksizes : chains) {
    const uint32_t radius =
        static_cast<uint32_t>(*std::max_element(ksizes.begin(), ksizes.end()) / 2);
    for (const PixelType type : {PixelType::kUint8, PixelType::kFloat32}) {
      // Odd and even sizes; heights that leave every remainder of the 4-row groups; images
      // shorter than the kernel (radius + 1 rows: reflection reaches the far border).
      const std::vector<ImageShape> shapes = {
          {224, 224, 3, type},
          {37, 29, 3, type},
          {20, 64, 1, type},
          {radius + 1, radius + 1, 3, type},
          {radius + 2, radius + 4, 1, type},
          {radius + 3, 2 * radius + 1, 3, type},
          {radius + 4, radius + 2, 3, type},
          {2 * radius + 6, 33, 3, type},
      };
      for (const ImageShape& shape : shapes) ExpectChainCase(chain, blur, shape, ksizes, key++);
    }
  }
}

}  // namespace blur_testing
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_CHAIN_TESTING_H_
