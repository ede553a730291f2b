// One build of ConvertThroughTable and ConvertThroughTable16 (convert_table_variants.h), named
// by STOKER_TESTED_BUILD ("portable", "avx512"; one test binary per build,
// augment/CMakeLists.txt), with float32 and 16-bit entries, against the definition
// out = table[c * 256 + v], bit for bit, and against the portable build: random images whose sizes
// leave every head and tail (1 pixel, odd widths and heights), 1 to 5 channels, both layouts,
// output pointers at every float offset of a 64-byte line, tables of random bit patterns (NaN
// payloads included) whose channels all differ. Guard values around the output catch stores outside
// it. Skipped (exit 77, shown as skipped) where this CPU or build lacks the build.

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
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

// E: the table's entries, float or uint16_t; compared as their bits.
template <typename E>
using Bits = std::conditional_t<std::is_same_v<E, float>, uint32_t, uint16_t>;
template <typename E>
using Out = std::conditional_t<std::is_same_v<E, float>, float, void>;
template <typename E>
using Convert = void (*)(const ImageView&, const E*, OutputLayout, TableStores, Out<E>*);

constexpr size_t kGuardBytes = 256;

template <typename E>
struct Build {
  std::string name;
  Convert<E> convert;
  TableStores stores;
};

void Dispatched(const ImageView& in, const float* table, OutputLayout layout, TableStores,
                float* out) {
  ConvertThroughTable(in, table, layout, out);
}
void Dispatched16(const ImageView& in, const uint16_t* table, OutputLayout layout, TableStores,
                  void* out) {
  ConvertThroughTable16(in, table, layout, out);
}

// The portable, AVX-512 and dispatched functions for entries E.
template <typename E>
struct Builds;
template <>
struct Builds<float> {
  static constexpr Convert<float> kPortable = &ConvertThroughTablePortable;
  static constexpr Convert<float> kAvx512 = &ConvertThroughTableAvx512;
  static constexpr Convert<float> kDispatched = &Dispatched;
};
template <>
struct Builds<uint16_t> {
  static constexpr Convert<uint16_t> kPortable = &ConvertThroughTable16Portable;
  static constexpr Convert<uint16_t> kAvx512 = &ConvertThroughTable16Avx512;
  static constexpr Convert<uint16_t> kDispatched = &Dispatched16;
};

// The builds under test, with each kind of stores; empty where this CPU lacks the build.
template <typename E>
std::vector<Build<E>> TestedBuilds() {
  const std::string name = STOKER_TESTED_BUILD;
  Convert<E> convert = nullptr;
  if (name == "portable") convert = Builds<E>::kPortable;
  if (name == "avx512" && CpuHasAvx512Vbmi()) convert = Builds<E>::kAvx512;
  if (convert == nullptr) return {};
  return {{name + " streaming", convert, TableStores::kStreaming},
          {name + " cached", convert, TableStores::kCached}};
}

template <typename E>
Bits<E> BitsOf(E v) {
  Bits<E> bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// The definition, as bit patterns: out[c * pixels + p] (CHW) or out[p * channels + c] (HWC).
template <typename E>
std::vector<Bits<E>> Expected(const std::vector<uint8_t>& src, const ImageShape& shape,
                              const std::vector<E>& table, OutputLayout layout) {
  const size_t pixels = size_t{shape.height} * shape.width;
  std::vector<Bits<E>> out(shape.elements());
  for (size_t p = 0; p < pixels; ++p) {
    for (size_t c = 0; c < shape.channels; ++c) {
      const size_t at = layout == OutputLayout::kChw ? c * pixels + p : p * shape.channels + c;
      out[at] = BitsOf(table[c * kTableValues + src[p * shape.channels + c]]);
    }
  }
  return out;
}

// Runs `build` into a buffer `offset` entries past a 64-byte line (plus one byte when `odd`)
// among guard bytes; returns the output's bit patterns and checks that the rest is untouched.
template <typename E>
std::vector<Bits<E>> Converted(const Build<E>& build, const std::vector<uint8_t>& src,
                               const ImageShape& shape, const std::vector<E>& table,
                               OutputLayout layout, size_t offset, bool odd = false) {
  const size_t bytes = shape.elements() * sizeof(E);
  std::vector<uint8_t> storage(bytes + 2 * kGuardBytes + 64 + 64 * sizeof(E));
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<uint8_t>(0xA5 ^ i);
  const std::vector<uint8_t> before = storage;
  const size_t start = (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 + kGuardBytes +
                       offset * sizeof(E) + (odd ? 1 : 0);
  uint8_t* out = storage.data() + start;
  const ImageView in{const_cast<uint8_t*>(src.data()), shape};
  build.convert(in, table.data(), layout, build.stores, reinterpret_cast<Out<E>*>(out));
  std::vector<Bits<E>> result(shape.elements());
  std::memcpy(result.data(), out, bytes);
  for (size_t i = 0; i < storage.size(); ++i) {
    if (i < start || i >= start + bytes) {
      EXPECT_EQ(storage[i], before[i])
          << "byte " << i << " outside the output, which is at " << start << ".." << start + bytes;
    }
  }
  return result;
}

template <typename E>
std::vector<E> RandomTable(size_t channels, uint64_t seed) {
  CounterRng rng(seed);
  std::vector<E> table(channels * kTableValues);
  for (E& v : table) {
    const auto bits = static_cast<Bits<E>>(rng.NextU64());
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

template <typename E>
class ConvertTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    builds_ = TestedBuilds<E>();
    if (builds_.empty()) GTEST_SKIP() << "no " STOKER_TESTED_BUILD " build on this CPU";
  }

  const Build<E> portable_{"portable", Builds<E>::kPortable, TableStores::kStreaming};
  std::vector<Build<E>> builds_;
};

using EntryTypes = ::testing::Types<float, uint16_t>;
TYPED_TEST_SUITE(ConvertTableTest, EntryTypes);

TYPED_TEST(ConvertTableTest, EqualsTheDefinitionForEverySizeChannelCountLayoutAndOffset) {
  using E = TypeParam;
  const uint32_t sizes[][2] = {{1, 1},  {1, 15}, {1, 16}, {1, 17},  {2, 33},  {3, 5},  {7, 9},
                               {1, 64}, {1, 65}, {5, 27}, {13, 31}, {17, 61}, {8, 64}, {31, 33}};
  uint64_t seed = 1;
  for (const auto& [height, width] : sizes) {
    for (uint32_t channels = 1; channels <= 5; ++channels) {
      const ImageShape shape{height, width, channels, PixelType::kUint8};
      const std::vector<uint8_t> src = RandomBytes(shape.elements(), ++seed);
      const std::vector<E> table = RandomTable<E>(channels, ++seed);
      for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
        SCOPED_TRACE(::testing::Message() << height << "x" << width << "x" << channels
                                          << (layout == OutputLayout::kChw ? " CHW" : " HWC"));
        const auto expected = Expected(src, shape, table, layout);
        ASSERT_EQ(Converted(this->portable_, src, shape, table, layout, 0), expected);
        for (size_t offset = 0; offset < 64 / sizeof(E); ++offset) {
          for (const Build<E>& build : this->builds_) {
            ASSERT_EQ(Converted(build, src, shape, table, layout, offset), expected)
                << build.name << " offset " << offset;
          }
        }
      }
    }
  }
}

// 16-bit outputs need no alignment at all: an odd address.
TEST(ConvertTable16Test, WritesOddAddresses) {
  const std::vector<Build<uint16_t>> builds = TestedBuilds<uint16_t>();
  if (builds.empty()) GTEST_SKIP() << "no " STOKER_TESTED_BUILD " build on this CPU";
  const ImageShape shape{9, 71, 3, PixelType::kUint8};
  const std::vector<uint8_t> src = RandomBytes(shape.elements(), 3);
  const std::vector<uint16_t> table = RandomTable<uint16_t>(3, 4);
  for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
    for (const Build<uint16_t>& build : builds) {
      for (size_t offset : {0, 5}) {
        ASSERT_EQ(Converted(build, src, shape, table, layout, offset, /*odd=*/true),
                  Expected(src, shape, table, layout))
            << build.name;
      }
    }
  }
}

// A batch-sized image (224x224x3) in both layouts, against the portable build.
TYPED_TEST(ConvertTableTest, EqualsThePortableBuildOnAFullSizeImage) {
  using E = TypeParam;
  const ImageShape shape{224, 224, 3, PixelType::kUint8};
  const std::vector<uint8_t> src = RandomBytes(shape.elements(), 7);
  const std::vector<E> table = RandomTable<E>(3, 8);
  for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
    const auto portable = Converted(this->portable_, src, shape, table, layout, 0);
    for (const Build<E>& build : this->builds_) {
      for (size_t offset : {0, 1, 3}) {
        ASSERT_EQ(Converted(build, src, shape, table, layout, offset), portable) << build.name;
      }
    }
  }
}

// Channel c's entries are c * 1000 + v: a lookup in another channel's table shows as a wrong
// thousand, named here per element.
TYPED_TEST(ConvertTableTest, EachElementUsesItsOwnChannelsTable) {
  using E = TypeParam;
  for (uint32_t channels = 1; channels <= 5; ++channels) {
    const ImageShape shape{9, 29, channels, PixelType::kUint8};
    const std::vector<uint8_t> src = RandomBytes(shape.elements(), 40 + channels);
    std::vector<E> table(channels * kTableValues);
    for (size_t i = 0; i < table.size(); ++i) {
      table[i] = static_cast<E>(i / kTableValues * 1000 + i % kTableValues);
    }
    const size_t pixels = size_t{shape.height} * shape.width;
    for (const Build<E>& build : this->builds_) {
      const auto chw = Converted(build, src, shape, table, OutputLayout::kChw, 0);
      const auto hwc = Converted(build, src, shape, table, OutputLayout::kHwc, 0);
      for (size_t p = 0; p < pixels; ++p) {
        for (size_t c = 0; c < channels; ++c) {
          const auto want = BitsOf(static_cast<E>(c * 1000 + src[p * channels + c]));
          ASSERT_EQ(chw[c * pixels + p], want) << build.name << " CHW pixel " << p << " ch " << c;
          ASSERT_EQ(hwc[p * channels + c], want) << build.name << " HWC pixel " << p << " ch " << c;
        }
      }
    }
  }
}

// What ConvertThroughTable and ConvertThroughTable16 pick on this CPU give the definition too.
TYPED_TEST(ConvertTableTest, TheDispatchedBuildEqualsTheDefinition) {
  using E = TypeParam;
  const ImageShape shape{23, 37, 3, PixelType::kUint8};
  const std::vector<uint8_t> src = RandomBytes(shape.elements(), 90);
  const std::vector<E> table = RandomTable<E>(3, 91);
  const Build<E> dispatched{"dispatched", Builds<E>::kDispatched, TableStores::kStreaming};
  for (OutputLayout layout : {OutputLayout::kChw, OutputLayout::kHwc}) {
    EXPECT_EQ(Converted(dispatched, src, shape, table, layout, 5),
              Expected(src, shape, table, layout));
  }
}

}  // namespace
}  // namespace table_internal
}  // namespace stoker
