// One build of ConvertThroughTable (convert_table_variants.h), named by STOKER_TESTED_BUILD
// ("portable", "avx512"; one test binary per build, augment/CMakeLists.txt), against the
// definition out = table[c * 256 + v], bit for bit, and (for a vector build) against the portable
// build: random images whose sizes leave every head and tail (1 pixel, odd widths and heights),
// 1 to 5 channels, both layouts, output pointers at every float offset of a 64-byte line, tables
// of random bit patterns (NaN payloads included) whose channels all differ. Guard values around
// the output catch stores outside it. Skipped (exit 77, shown as skipped) where this CPU or build
// lacks the build.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "augment/kernels/convert.h"
#include "augment/kernels/convert_table_variants.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"

#ifndef STOKER_TESTED_BUILD
#error "STOKER_TESTED_BUILD names the build under test"
#endif

namespace stoker {
namespace table_internal {
namespace {

constexpr uint32_t kGuard = 0x7FC0DEADu;  // a NaN no table here holds
constexpr size_t kGuardFloats = 64;

using Convert = void (*)(const ImageView&, const float*, OutputLayout, TableStores, float*);

struct Build {
  std::string name;
  Convert convert;
  TableStores stores;
};

// The builds under test, with each kind of stores; empty where this CPU lacks the build.
std::vector<Build> TestedBuilds() {
  const std::string name = STOKER_TESTED_BUILD;
  Convert convert = nullptr;
  if (name == "portable") convert = &ConvertThroughTablePortable;
  if (name == "avx512" && CpuHasAvx512Vbmi()) convert = &ConvertThroughTableAvx512;
  if (convert == nullptr) return {};
  return {{name + " streaming", convert, TableStores::kStreaming},
          {name + " cached", convert, TableStores::kCached}};
}

const Build kPortable{"portable", &ConvertThroughTablePortable, TableStores::kStreaming};

uint32_t Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// The definition, as bit patterns: out[c * pixels + p] (CHW) or out[p * channels + c] (HWC).
std::vector<uint32_t> Expected(const std::vector<uint8_t>& src, const ImageShape& shape,
                               const std::vector<float>& table, OutputLayout layout) {
  const size_t pixels = size_t{shape.height} * shape.width;
  std::vector<uint32_t> out(shape.elements());
  for (size_t p = 0; p < pixels; ++p) {
    for (size_t c = 0; c < shape.channels; ++c) {
      const size_t at = layout == OutputLayout::kChw ? c * pixels + p : p * shape.channels + c;
      out[at] = Bits(table[c * kTableValues + src[p * shape.channels + c]]);
    }
  }
  return out;
}

// Runs `build` into a buffer `offset` floats past a 64-byte line, guards on both sides;
// returns the output's bit patterns and checks the guards.
std::vector<uint32_t> Converted(const Build& build, const std::vector<uint8_t>& src,
                                const ImageShape& shape, const std::vector<float>& table,
                                OutputLayout layout, size_t offset) {
  const size_t n = shape.elements();
  std::vector<uint32_t> storage(n + 2 * kGuardFloats + 16 + 16, kGuard);
  uint32_t* base = storage.data();
  while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
  uint32_t* out = base + kGuardFloats + offset;
  const ImageView in{const_cast<uint8_t*>(src.data()), shape};
  build.convert(in, table.data(), layout, build.stores, reinterpret_cast<float*>(out));
  for (uint32_t* g = storage.data(); g < out; ++g) EXPECT_EQ(*g, kGuard) << "before the output";
  for (uint32_t* g = out + n; g < storage.data() + storage.size(); ++g) {
    EXPECT_EQ(*g, kGuard) << "after the output";
  }
  return std::vector<uint32_t>(out, out + n);
}

std::vector<float> RandomTable(size_t channels, uint64_t seed) {
  CounterRng rng(seed);
  std::vector<float> table(channels * kTableValues);
  for (float& v : table) {
    uint32_t bits = static_cast<uint32_t>(rng.NextU64());
    if (bits == kGuard) bits ^= 1;
    std::memcpy(&v, &bits, sizeof(v));
  }
  return table;
}

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed) {
  CounterRng rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = static_cast<uint8_t>(rng.UniformInt(256));
  return v;
}

class ConvertTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    builds_ = TestedBuilds();
    if (builds_.empty()) GTEST_SKIP() << "no " STOKER_TESTED_BUILD " build on this CPU";
  }

  std::vector<Build> builds_;
};

TEST_F(ConvertTableTest, EqualsTheDefinitionForEverySizeChannelCountLayoutAndOffset) {
  const uint32_t sizes[][2] = {{1, 1},  {1, 15}, {1, 16}, {1, 17},  {2, 33},  {3, 5},  {7, 9},
                               {1, 64}, {1, 65}, {5, 27}, {13, 31}, {17, 61}, {8, 64}, {31, 33}};
  uint64_t seed = 1;
  for (const auto& [height, width] : sizes) {
    for (uint32_t channels = 1; channels <= 5; ++channels) {
      const ImageShape shape{height, width, channels, PixelType::kUint8};
      const std::vector<uint8_t> src = RandomBytes(shape.elements(), ++seed);
      const std::vector<float> table = RandomTable(channels, ++seed);
      for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
        const std::vector<uint32_t> expected = Expected(src, shape, table, layout);
        const std::vector<uint32_t> portable = Converted(kPortable, src, shape, table, layout, 0);
        ASSERT_EQ(portable, expected) << height << "x" << width << "x" << channels;
        for (size_t offset = 0; offset < 16; ++offset) {
          for (const Build& build : builds_) {
            ASSERT_EQ(Converted(build, src, shape, table, layout, offset), expected)
                << build.name << " " << height << "x" << width << "x" << channels
                << (layout == OutputLayout::kChw ? " CHW" : " HWC") << " offset " << offset;
          }
        }
      }
    }
  }
}

// A batch-sized image (224x224x3) in both layouts, against the portable build.
TEST_F(ConvertTableTest, EqualsThePortableBuildOnAFullSizeImage) {
  const ImageShape shape{224, 224, 3, PixelType::kUint8};
  const std::vector<uint8_t> src = RandomBytes(shape.elements(), 7);
  const std::vector<float> table = RandomTable(3, 8);
  for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
    const std::vector<uint32_t> portable = Converted(kPortable, src, shape, table, layout, 0);
    for (const Build& build : builds_) {
      for (size_t offset : {0, 1, 3}) {
        ASSERT_EQ(Converted(build, src, shape, table, layout, offset), portable) << build.name;
      }
    }
  }
}

// Channel c's entries are c * 1000 + v: a lookup in another channel's table shows as a wrong
// thousand, named here per element.
TEST_F(ConvertTableTest, EachElementUsesItsOwnChannelsTable) {
  for (uint32_t channels = 1; channels <= 5; ++channels) {
    const ImageShape shape{9, 29, channels, PixelType::kUint8};
    const std::vector<uint8_t> src = RandomBytes(shape.elements(), 40 + channels);
    std::vector<float> table(channels * kTableValues);
    for (size_t i = 0; i < table.size(); ++i) {
      table[i] = static_cast<float>(i / kTableValues * 1000 + i % kTableValues);
    }
    const size_t pixels = size_t{shape.height} * shape.width;
    for (const Build& build : builds_) {
      const std::vector<uint32_t> chw = Converted(build, src, shape, table, OutputLayout::kChw, 0);
      const std::vector<uint32_t> hwc = Converted(build, src, shape, table, OutputLayout::kHwc, 0);
      for (size_t p = 0; p < pixels; ++p) {
        for (size_t c = 0; c < channels; ++c) {
          const float want = static_cast<float>(c * 1000 + src[p * channels + c]);
          ASSERT_EQ(chw[c * pixels + p], Bits(want))
              << build.name << " CHW pixel " << p << " ch " << c;
          ASSERT_EQ(hwc[p * channels + c], Bits(want))
              << build.name << " HWC pixel " << p << " ch " << c;
        }
      }
    }
  }
}

// What ConvertThroughTable picks on this CPU gives the definition too.
TEST_F(ConvertTableTest, TheDispatchedBuildEqualsTheDefinition) {
  const ImageShape shape{23, 37, 3, PixelType::kUint8};
  const std::vector<uint8_t> src = RandomBytes(shape.elements(), 90);
  const std::vector<float> table = RandomTable(3, 91);
  for (TableStores stores : {TableStores::kStreaming, TableStores::kCached}) {
    const Build dispatched{"dispatched", &ConvertThroughTable, stores};
    for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
      EXPECT_EQ(Converted(dispatched, src, shape, table, layout, 5),
                Expected(src, shape, table, layout));
    }
  }
}

}  // namespace
}  // namespace table_internal
}  // namespace stoker
