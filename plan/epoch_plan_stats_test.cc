// Statistical tests of the epoch plan's shuffle (plan/keyed_permutation.h, EpochOrder): the order
// is a bijection, positions are uniform, consecutive elements and consecutive epochs are
// independent. Each check is a chi-square test against the critical value at p = 1e-6 for its
// degrees of freedom, over fixed seeds (deterministic, never flaky). The same checks run on weak
// bijections (identity xor key, i*a+b mod N), which they must reject: the checks have teeth.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <vector>

#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plan/epoch_plan.h"
#include "plan/keyed_permutation.h"
#include "plan/shard_window_order.h"

namespace stoker {
namespace {

using stoker::v1::ShuffleMode;
using Order = std::vector<uint64_t>;
// The order of (seed, epoch) over [0, n).
using Shuffler = std::function<Order(uint64_t n, uint64_t seed, uint32_t epoch)>;

constexpr uint64_t kN = 1024;
constexpr int kBuckets = 8;
constexpr int kSeeds = 200;

// The chi-square value exceeded with probability 1e-6 at `dof` degrees of freedom
// (Wilson-Hilferty; within 1% of the exact quantile for dof >= 10).
double ChiSquareCritical(double dof) {
  constexpr double kZ = 4.753424;  // standard normal upper 1e-6 quantile
  const double c = 2.0 / (9.0 * dof);
  return dof * std::pow(1.0 - c + kZ * std::sqrt(c), 3);
}

struct ChiSquare {
  double statistic = 0;
  double dof = 0;
  ChiSquare& operator+=(const ChiSquare& other) {
    statistic += other.statistic;
    dof += other.dof;
    return *this;
  }
  bool Rejects() const { return statistic > ChiSquareCritical(dof); }
};

// Pearson's test of independence of bucket(a[i]) and bucket(b[i]), values in [0, n).
ChiSquare Independence(const Order& a, const Order& b, uint64_t n) {
  std::vector<double> table(kBuckets * kBuckets, 0), rows(kBuckets, 0), cols(kBuckets, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    const uint64_t r = a[i] * kBuckets / n, c = b[i] * kBuckets / n;
    ++table[r * kBuckets + c];
    ++rows[r];
    ++cols[c];
  }
  ChiSquare result{0, (kBuckets - 1) * (kBuckets - 1)};
  for (int r = 0; r < kBuckets; ++r) {
    for (int c = 0; c < kBuckets; ++c) {
      const double expected = rows[r] * cols[c] / a.size();
      const double diff = table[r * kBuckets + c] - expected;
      result.statistic += diff * diff / expected;
    }
  }
  return result;
}

// Position uniformity: which value bucket lands in which position bucket, summed over seeds.
ChiSquare PositionUniformity(const Shuffler& shuffle) {
  Order positions(kN);
  std::iota(positions.begin(), positions.end(), uint64_t{0});
  ChiSquare total;
  for (uint64_t seed = 0; seed < kSeeds; ++seed)
    total += Independence(positions, shuffle(kN, seed, 0), kN);
  return total;
}

// Consecutive elements: bucket of order[i] against bucket of order[i+1].
ChiSquare ConsecutivePairs(const Shuffler& shuffle) {
  ChiSquare total;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Order order = shuffle(kN, seed, 0);
    total += Independence(Order(order.begin(), order.end() - 1),
                          Order(order.begin() + 1, order.end()), kN);
  }
  return total;
}

// Consecutive elements: (order[i+1] - order[i]) mod n is uniform on [1, n) for a random order.
ChiSquare ConsecutiveDifferences(const Shuffler& shuffle) {
  std::vector<double> counts(kBuckets, 0);
  double pairs = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Order order = shuffle(kN, seed, 0);
    for (size_t i = 0; i + 1 < order.size(); ++i) {
      ++counts[(order[i + 1] + kN - order[i]) % kN * kBuckets / kN];
      ++pairs;
    }
  }
  ChiSquare result{0, kBuckets - 1};
  for (int bucket = 0; bucket < kBuckets; ++bucket) {
    const double width = kN / kBuckets - (bucket == 0 ? 1 : 0);  // 0 is no difference.
    const double expected = pairs * width / (kN - 1);
    result.statistic += (counts[bucket] - expected) * (counts[bucket] - expected) / expected;
  }
  return result;
}

// Every epoch a different order: the same position's buckets in epochs e and e+1 independent.
ChiSquare EpochToEpoch(const Shuffler& shuffle) {
  ChiSquare total;
  for (uint64_t seed = 0; seed < kSeeds / 10; ++seed) {
    for (uint32_t epoch = 0; epoch < 10; ++epoch) {
      total += Independence(shuffle(kN, seed, epoch), shuffle(kN, seed, epoch + 1), kN);
    }
  }
  return total;
}

Order PlanOrder(uint64_t n, uint64_t seed, uint32_t epoch, ShuffleMode mode, uint32_t block) {
  const EpochOrder order(n, seed, epoch, mode, block);
  Order out(n);
  for (uint64_t p = 0; p < n; ++p) out[p] = order.At(p);
  return out;
}

Order Global(uint64_t n, uint64_t seed, uint32_t epoch) {
  return PlanOrder(n, seed, epoch, stoker::v1::SHUFFLE_MODE_GLOBAL, 0);
}

// One block holding every sample: the order inside a block.
Order OneBlock(uint64_t n, uint64_t seed, uint32_t epoch) {
  return PlanOrder(n, seed, epoch, stoker::v1::SHUFFLE_MODE_BLOCK, static_cast<uint32_t>(n));
}

// Blocks of 16: consecutive elements (mostly the same block) are related by design.
Order Block16(uint64_t n, uint64_t seed, uint32_t epoch) {
  return PlanOrder(n, seed, epoch, stoker::v1::SHUFFLE_MODE_BLOCK, 16);
}

// The block numbers in slot order of a BLOCK order of blocks of 16 (n a multiple of 16), scaled
// back to [0, n) so the same checks apply to the order of blocks.
Order Block16Slots(uint64_t n, uint64_t seed, uint32_t epoch) {
  const Order order = PlanOrder(n * 16, seed, epoch, stoker::v1::SHUFFLE_MODE_BLOCK, 16);
  Order slots(n);
  for (uint64_t t = 0; t < n; ++t) slots[t] = order[t * 16] / 16;
  return slots;
}

// Weak bijections: identity xor key, which every check rejects, and i*a + b mod n (a odd: a
// bijection of a power of two), whose constant step the consecutive checks reject.
Order XorKey(uint64_t n, uint64_t seed, uint32_t epoch) {
  const uint64_t key = KeyOf(seed, epoch, 0) % n;
  Order out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = i ^ key;
  return out;
}

Order Affine(uint64_t n, uint64_t seed, uint32_t epoch) {
  const uint64_t a = KeyOf(seed, epoch, 1) % n | 1, b = KeyOf(seed, epoch, 2) % n;
  Order out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = (i * a + b) % n;
  return out;
}

// SHARD_WINDOW over n/16 shards of 16 samples in windows of `window` shards.
Order ShardWindow(uint64_t n, uint64_t seed, uint32_t epoch, uint32_t window) {
  std::vector<uint64_t> starts;
  for (uint64_t s = 0; s <= n / 16; ++s) starts.push_back(s * 16);
  const auto windows =
      ShardWindowOrder::Create(starts, window, KeyOf(seed, epoch, 7), KeyOf(seed, epoch, 7));
  Order out(n);
  for (uint64_t p = 0; p < n; ++p) out[p] = windows->At(p);
  return out;
}

// One window holding every shard (n/16 <= 64 shards).
Order ShardWindowAll(uint64_t n, uint64_t seed, uint32_t epoch) {
  return ShardWindow(n, seed, epoch, 64);
}

// Windows of 8 shards: 8 windows of 128 samples for kN.
Order ShardWindow8(uint64_t n, uint64_t seed, uint32_t epoch) {
  return ShardWindow(n, seed, epoch, 8);
}

// The shards of a ShardWindow8 order of n shards of 16 samples, in the order of their first
// sample: window by window, and in a random order inside each window.
Order ShardWindow8Shards(uint64_t n, uint64_t seed, uint32_t epoch) {
  Order shards;
  std::set<uint64_t> seen;
  for (uint64_t sample : ShardWindow8(n * 16, seed, epoch)) {
    if (seen.insert(sample / 16).second) shards.push_back(sample / 16);
  }
  return shards;
}

// Mixing inside each window of ShardWindow8: the position bucket (of 8) within the window
// against the shard's slot (of 8) within the window, summed over windows and seeds.
ChiSquare WindowMixing() {
  constexpr uint64_t kWindowSamples = 8 * 16;
  ChiSquare total;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Order order = ShardWindow8(kN, seed, 0);
    for (uint64_t begin = 0; begin < kN; begin += kWindowSamples) {
      // Slot within the window: the rank of the sample's shard among the window's shards.
      std::vector<uint64_t> shards;
      for (uint64_t q = 0; q < kWindowSamples; ++q) shards.push_back(order[begin + q] / 16);
      std::vector<uint64_t> sorted = shards;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      EXPECT_EQ(sorted.size(), 8u) << "a window holds 8 whole shards";
      Order positions, slots;
      for (uint64_t q = 0; q < kWindowSamples; ++q) {
        positions.push_back(q);
        slots.push_back(
            (std::lower_bound(sorted.begin(), sorted.end(), shards[q]) - sorted.begin()) * 16);
      }
      total += Independence(positions, slots, kWindowSamples);
    }
  }
  return total;
}

bool IsPermutation(Order order) {
  std::sort(order.begin(), order.end());
  for (uint64_t i = 0; i < order.size(); ++i) {
    if (order[i] != i) return false;
  }
  return true;
}

TEST(ShuffleStatsTest, GlobalPassesEveryCheck) {
  EXPECT_FALSE(PositionUniformity(Global).Rejects());
  EXPECT_FALSE(ConsecutivePairs(Global).Rejects());
  EXPECT_FALSE(ConsecutiveDifferences(Global).Rejects());
  EXPECT_FALSE(EpochToEpoch(Global).Rejects());
}

TEST(ShuffleStatsTest, BlockPassesEveryCheckOnBlocksAndInsideThem) {
  EXPECT_FALSE(PositionUniformity(OneBlock).Rejects());
  EXPECT_FALSE(ConsecutivePairs(OneBlock).Rejects());
  EXPECT_FALSE(ConsecutiveDifferences(OneBlock).Rejects());
  EXPECT_FALSE(EpochToEpoch(OneBlock).Rejects());
  EXPECT_FALSE(PositionUniformity(Block16Slots).Rejects());
  EXPECT_FALSE(ConsecutivePairs(Block16Slots).Rejects());
  EXPECT_FALSE(ConsecutiveDifferences(Block16Slots).Rejects());
  EXPECT_FALSE(EpochToEpoch(Block16Slots).Rejects());
  // Inside a block, consecutive samples share a value bucket: the pairs check sees it.
  EXPECT_TRUE(ConsecutivePairs(Block16).Rejects());
}

TEST(ShuffleStatsTest, ShardWindowOfEveryShardPassesEveryCheck) {
  EXPECT_FALSE(PositionUniformity(ShardWindowAll).Rejects());
  EXPECT_FALSE(ConsecutivePairs(ShardWindowAll).Rejects());
  EXPECT_FALSE(ConsecutiveDifferences(ShardWindowAll).Rejects());
  EXPECT_FALSE(EpochToEpoch(ShardWindowAll).Rejects());
}

TEST(ShuffleStatsTest, ShardWindowMixesEachWindowAndPlacesShardsUniformly) {
  // Shards are placed into windows uniformly, anew every epoch; each window's samples are
  // uniformly interleaved.
  EXPECT_FALSE(PositionUniformity(ShardWindow8Shards).Rejects());
  EXPECT_FALSE(EpochToEpoch(ShardWindow8Shards).Rejects());
  EXPECT_FALSE(WindowMixing().Rejects());
  // Within one epoch, samples of a shard stay in one window's stretch and consecutive samples come
  // from the same 8 of 64 shards: related by design, and the sample-level checks see it.
  EXPECT_TRUE(PositionUniformity(ShardWindow8).Rejects());
  EXPECT_TRUE(ConsecutivePairs(ShardWindow8).Rejects());
}

TEST(ShuffleStatsTest, WeakBijectionsFailTheChecks) {
  EXPECT_TRUE(PositionUniformity(XorKey).Rejects());
  EXPECT_TRUE(ConsecutivePairs(XorKey).Rejects());
  EXPECT_TRUE(ConsecutiveDifferences(XorKey).Rejects());
  EXPECT_TRUE(EpochToEpoch(XorKey).Rejects());
  EXPECT_TRUE(ConsecutivePairs(Affine).Rejects());
  EXPECT_TRUE(ConsecutiveDifferences(Affine).Rejects());
}

TEST(ShuffleStatsTest, EveryEpochIsADifferentOrder) {
  for (uint64_t n : {2u, 3u, 10u, 1000u}) {
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<Order> epochs;
      for (uint32_t epoch = 0; epoch < 8; ++epoch) epochs.push_back(Global(n, seed, epoch));
      std::sort(epochs.begin(), epochs.end());
      const auto distinct = std::unique(epochs.begin(), epochs.end()) - epochs.begin();
      // 10! orders and more: all 8 differ. 2 or 3 samples: not the same order every epoch.
      EXPECT_EQ(distinct, n >= 10 ? 8 : distinct) << n;
      EXPECT_GT(distinct, 1) << n << " seed " << seed;
    }
  }
}

TEST(ShuffleStatsTest, OrdersAreBijectionsForEverySize) {
  std::vector<uint64_t> sizes = {1, 2, 3, 5, 6, 7, 11, 100, 1000, 4097, 10007};
  for (int bits = 2; bits <= 12; ++bits) {
    for (int delta = -1; delta <= 1; ++delta) sizes.push_back((uint64_t{1} << bits) + delta);
  }
  for (uint64_t n : sizes) {
    for (uint64_t seed = 0; seed < 3; ++seed) {
      EXPECT_TRUE(IsPermutation(Global(n, seed, 1))) << n;
      for (uint32_t block :
           {1u, 2u, 3u, 7u, 64u, static_cast<uint32_t>(n), static_cast<uint32_t>(n + 5)}) {
        const Order order = PlanOrder(n, seed, 1, stoker::v1::SHUFFLE_MODE_BLOCK, block);
        EXPECT_TRUE(IsPermutation(order)) << n << " block " << block;
      }
    }
  }
}

TEST(ShuffleStatsTest, BlockKeepsEachBlockContiguousIncludingTheShortOne) {
  for (uint64_t n : {22u, 23u, 24u, 25u, 1001u}) {
    for (uint64_t seed = 0; seed < 5; ++seed) {
      const uint32_t block = 4;
      const Order order = PlanOrder(n, seed, 0, stoker::v1::SHUFFLE_MODE_BLOCK, block);
      std::vector<bool> finished((n + block - 1) / block, false);
      for (uint64_t p = 0; p < n; ++p) {
        const uint64_t b = order[p] / block;
        if (p > 0 && order[p - 1] / block != b) {
          finished[order[p - 1] / block] = true;
          EXPECT_FALSE(finished[b]) << "block " << b << " split, n " << n;
        }
      }
    }
  }
}

TEST(KeyedPermutationTest, InverseUndoesAtLargeSizes) {
  for (uint64_t n : {uint64_t{1000000007}, uint64_t{1} << 36, (uint64_t{1} << 40) + 3,
                     (uint64_t{1} << 63) + 5, ~uint64_t{0}}) {
    const KeyedPermutation p(n, 99);
    CounterRng rng(n);
    for (int i = 0; i < 1000; ++i) {
      const uint64_t x = rng.UniformInt(n);
      const uint64_t y = p(x);
      ASSERT_LT(y, n);
      EXPECT_EQ(p.Inverse(y), x) << n;
    }
  }
}

TEST(KeyedPermutationTest, TrivialSizesAreTheIdentity) {
  EXPECT_EQ(KeyedPermutation(1, 5)(0), 0u);
  EXPECT_EQ(KeyedPermutation(1, 5).Inverse(0), 0u);
}

}  // namespace
}  // namespace stoker
