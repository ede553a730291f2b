#include "common/counter_rng.h"

#include <vector>

#include "gtest/gtest.h"

namespace stoker {
namespace {

// Pinned values: a change here changes every epoch plan and every augmented sample.
TEST(CounterRngTest, AlgorithmIsPinned) {
  EXPECT_EQ(Mix64(0), 0u);
  EXPECT_EQ(Mix64(kGoldenGamma), 0xE220A8397B1DCDAFULL);  // SplitMix64's first output for seed 0
  CounterRng rng(0);
  EXPECT_EQ(rng.NextU64(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(rng.NextU64(), 0x6E789E6AA1B965F4ULL);
}

TEST(CounterRngTest, SameKeySameStream) {
  CounterRng a(1, 2, 3), b(1, 2, 3), c(1, 2, 4);
  for (int i = 0; i < 100; ++i) {
    const uint64_t va = a.NextU64();
    EXPECT_EQ(va, b.NextU64());
    EXPECT_NE(va, c.NextU64());
  }
}

TEST(CounterRngTest, UniformIntStaysInRangeAndCoversIt) {
  CounterRng rng(42);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) {
    const uint64_t v = rng.UniformInt(7);
    ASSERT_LT(v, 7u);
    ++seen[v];
  }
  for (int count : seen) EXPECT_GT(count, 800);
}

TEST(CounterRngTest, UniformFloatInUnitInterval) {
  CounterRng rng(7);
  for (int i = 0; i < 10000; ++i) {
    const float f = rng.UniformFloat();
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    const float g = rng.UniformFloat(0.1f, 2.0f);
    ASSERT_GE(g, 0.1f);
    ASSERT_LT(g, 2.0f);
  }
}

}  // namespace
}  // namespace stoker
