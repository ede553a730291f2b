#include "augment/decoded_cache_choice.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

// Figures of the shape decoded-cache-e2e measures: a fixed resize before a random crop (a hit far
// cheaper than the fused path), and random_resized_crop right after decode (the fused path
// decodes only its window, a miss decodes the whole image).
DecodedCacheCosts ResizeThenCrop() {
  return DecodedCacheCosts{.uncached_seconds = 1.0e-3,
                           .miss_seconds = 1.3e-3,
                           .hit_seconds = 0.2e-3,
                           .prefix_seconds = 0.9e-3,
                           .entry_bytes = 196'608};
}
DecodedCacheCosts CropRightAfterDecode() {
  return DecodedCacheCosts{.uncached_seconds = 0.8e-3,
                           .miss_seconds = 2.8e-3,
                           .hit_seconds = 0.45e-3,
                           .prefix_seconds = 2.4e-3,
                           .entry_bytes = 562'500};
}

TEST(DecodedCacheChoiceTest, AFixedResizeWorthKeepingIsCachedFromTwoPasses) {
  const DecodedCacheChoice one = ChooseDecodedCache(ResizeThenCrop(), {1000, 1000, 1, false});
  EXPECT_FALSE(one.use);
  EXPECT_DOUBLE_EQ(one.with_cache_seconds, 1.3e-3);
  const DecodedCacheChoice three = ChooseDecodedCache(ResizeThenCrop(), {1000, 1000, 3, false});
  EXPECT_TRUE(three.use);
  EXPECT_DOUBLE_EQ(three.hit_share, 1.0);
  EXPECT_DOUBLE_EQ(three.with_cache_seconds, (1.3e-3 + 2 * 0.2e-3) / 3);
  EXPECT_DOUBLE_EQ(three.without_cache_seconds, 1.0e-3);
  EXPECT_EQ(three.why.rfind("use the cache: 0.567 ms per image over 3 passes", 0), 0u) << three.why;
  EXPECT_EQ(DecodedCacheBreakEvenPasses(ResizeThenCrop()), 2u);
}

TEST(DecodedCacheChoiceTest, ACropRightAfterDecodePaysOnlyOverManyPasses) {
  EXPECT_FALSE(ChooseDecodedCache(CropRightAfterDecode(), {1000, 1000, 3, false}).use);
  EXPECT_TRUE(ChooseDecodedCache(CropRightAfterDecode(), {1000, 1000, 90, false}).use);
  // (2.8 - 0.45) / (0.8 - 0.45) = 6.7: pays from the 7th pass.
  EXPECT_EQ(DecodedCacheBreakEvenPasses(CropRightAfterDecode()), 7u);
  EXPECT_FALSE(ChooseDecodedCache(CropRightAfterDecode(), {1000, 1000, 6, false}).use);
  EXPECT_TRUE(ChooseDecodedCache(CropRightAfterDecode(), {1000, 1000, 7, false}).use);
}

TEST(DecodedCacheChoiceTest, ACacheHoldingASmallShareOfTheDatasetIsLeftOff) {
  // 90 passes, but the cache holds 1% of the entries: later passes miss 99 times in 100.
  const DecodedCacheChoice choice =
      ChooseDecodedCache(CropRightAfterDecode(), {1'281'167, 12'811, 90, false});
  EXPECT_FALSE(choice.use);
  EXPECT_NEAR(choice.hit_share, 0.01, 1e-4);
  EXPECT_NE(choice.why.find("leave it off"), std::string::npos) << choice.why;
}

TEST(DecodedCacheChoiceTest, SweepAlignedJobsHitWhileTheCacheHoldsTheirBlocks) {
  // 4 one-epoch jobs of a sweep over 10,000 samples; the cache holds 1,000 entries.
  DecodedCacheOutlook outlook{.samples = 10'000, .entries_fit = 1'000, .passes = 4};
  const DecodedCacheChoice unaligned = ChooseDecodedCache(ResizeThenCrop(), outlook);
  EXPECT_FALSE(unaligned.use) << unaligned.why;  // 10 % of later passes hit
  EXPECT_DOUBLE_EQ(unaligned.aligned_hit_share, 0);
  // The same jobs sharing a sweep seed, reading blocks of 256 in step: the 3 followers hit.
  outlook.aligned_passes = 3;
  outlook.aligned_window_samples = 256;
  const DecodedCacheChoice aligned = ChooseDecodedCache(ResizeThenCrop(), outlook);
  EXPECT_TRUE(aligned.use) << aligned.why;
  EXPECT_DOUBLE_EQ(aligned.aligned_hit_share, 1.0);
  EXPECT_DOUBLE_EQ(aligned.with_cache_seconds, (1.3e-3 + 3 * 0.2e-3) / 4);
  EXPECT_NE(aligned.why.find("3 sweep-aligned passes 100%"), std::string::npos) << aligned.why;
  // Blocks of 2,000: the cache holds a quarter of the two blocks the jobs may straddle.
  outlook.aligned_window_samples = 2'000;
  const DecodedCacheChoice large = ChooseDecodedCache(ResizeThenCrop(), outlook);
  EXPECT_DOUBLE_EQ(large.aligned_hit_share, 0.25);
  EXPECT_FALSE(large.use) << large.why;
  // Aligned passes never exceed the passes after the first.
  outlook.aligned_window_samples = 256;
  outlook.aligned_passes = 9;
  EXPECT_DOUBLE_EQ(ChooseDecodedCache(ResizeThenCrop(), outlook).with_cache_seconds,
                   aligned.with_cache_seconds);
}

TEST(DecodedCacheChoiceTest, EntriesTheCacheWouldNotAdmitNeverHit) {
  DecodedCacheCosts cheap = ResizeThenCrop();
  cheap.prefix_seconds = 0.5e-3;  // 2.54 ns per byte kept, under the threshold
  const DecodedCacheChoice choice = ChooseDecodedCache(cheap, {1000, 1000, 10, false});
  EXPECT_FALSE(choice.use);
  EXPECT_EQ(choice.hit_share, 0);
  EXPECT_NE(choice.why.find("entries not admitted: 2.54 ns"), std::string::npos) << choice.why;
  // Admitting everything (DECODED_CACHE_ALWAYS' offers) lets the same costs hit.
  EXPECT_TRUE(ChooseDecodedCache(cheap, {1000, 1000, 10, true}).use);
}

TEST(DecodedCacheChoiceTest, AHitNoCheaperThanTheUncachedPathNeverBreaksEven) {
  DecodedCacheCosts costs = ResizeThenCrop();
  costs.hit_seconds = costs.uncached_seconds;
  EXPECT_EQ(DecodedCacheBreakEvenPasses(costs), 0u);
  EXPECT_FALSE(ChooseDecodedCache(costs, {1000, 1000, 1000, false}).use);
}

}  // namespace
}  // namespace stoker
