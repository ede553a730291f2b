#include "worker/decoded_cache.h"

#include <cstring>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

// An 8x8x3 image whose bytes depend on `seed`; stored raw it takes one block of the arena.
struct CacheTestImage {
  explicit CacheTestImage(uint32_t seed, uint32_t side = 8) {
    buffer.Reshape({side, side, 3, PixelType::kUint8});
    auto* p = static_cast<uint8_t*>(buffer.view().data);
    for (size_t i = 0; i < buffer.shape().bytes(); ++i) p[i] = static_cast<uint8_t>(i * 7 + seed);
  }
  ImageView view() const { return buffer.view(); }
  ImageBuffer buffer;
};

constexpr uint64_t kCharge = DecodedCache::Charge(8 * 8 * 3);

DecodedCacheKey CacheTestKey(uint64_t index) { return {1, index, 2}; }

bool SamePixels(const ImageBuffer& a, const ImageView& b) {
  return a.shape() == b.shape && std::memcmp(a.view().data, b.data, b.shape.bytes()) == 0;
}

TEST(DecodedCacheTest, HitReturnsThePixelsAndTheSavedSeconds) {
  for (DecodedCacheCompression compression :
       {DecodedCacheCompression::kNone, DecodedCacheCompression::kLz4}) {
    DecodedCache cache(1 << 20, compression);
    const CacheTestImage image(3);
    ImageBuffer out;
    EXPECT_LT(cache.Lookup(CacheTestKey(5), &out), 0);
    EXPECT_TRUE(cache.Offer(CacheTestKey(5), image.view(), 0.25, /*force=*/true));
    EXPECT_EQ(cache.Lookup(CacheTestKey(5), &out), 0.25);
    EXPECT_TRUE(SamePixels(out, image.view()));
    // Another prefix or dataset is another key.
    EXPECT_LT(cache.Lookup({1, 5, 3}, &out), 0);
    EXPECT_LT(cache.Lookup({2, 5, 2}, &out), 0);
    const DecodedCacheStats stats = cache.stats();
    EXPECT_EQ(stats.hits, 1u);
    EXPECT_EQ(stats.misses, 3u);
    EXPECT_EQ(stats.insertions, 1u);
    EXPECT_EQ(stats.entries, 1u);
    EXPECT_DOUBLE_EQ(stats.saved_seconds, 0.25);
    if (compression == DecodedCacheCompression::kNone) {
      EXPECT_EQ(stats.bytes, kCharge);
    }
  }
}

TEST(DecodedCacheTest, BytesStayWithinTheCapacityAndClockGivesAHitEntryASecondChance) {
  DecodedCache cache(3 * kCharge, DecodedCacheCompression::kNone, /*shards=*/1);
  const CacheTestImage image(0);
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(cache.Offer(CacheTestKey(i), image.view(), 0, true));
  ImageBuffer out;
  ASSERT_GE(cache.Lookup(CacheTestKey(0), &out), 0);  // 0 referenced: 1 is evicted first
  ASSERT_TRUE(cache.Offer(CacheTestKey(3), image.view(), 0, true));
  EXPECT_GE(cache.Lookup(CacheTestKey(0), &out), 0);
  EXPECT_LT(cache.Lookup(CacheTestKey(1), &out), 0);
  EXPECT_GE(cache.Lookup(CacheTestKey(2), &out), 0);
  EXPECT_GE(cache.Lookup(CacheTestKey(3), &out), 0);
  for (uint64_t i = 4; i < 40; ++i)
    ASSERT_TRUE(cache.Offer(CacheTestKey(i), image.view(), 0, true));
  const DecodedCacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.bytes, 3 * kCharge);
  EXPECT_EQ(stats.insertions, 40u);
  EXPECT_EQ(stats.evictions, 37u);
}

TEST(DecodedCacheTest, AdmitsByPrefixCpuPerByteUnlessForced) {
  DecodedCache cache(1 << 20, DecodedCacheCompression::kNone);
  const CacheTestImage image(0);  // 192 bytes kept
  const double threshold = kMinPrefixNanosPerByte * 192 * 1e-9;
  EXPECT_FALSE(cache.Offer(CacheTestKey(0), image.view(), threshold * 0.9, false));
  EXPECT_TRUE(cache.Offer(CacheTestKey(1), image.view(), threshold * 1.1, false));
  EXPECT_TRUE(cache.Offer(CacheTestKey(2), image.view(), 0, /*force=*/true));
  // A second offer of a kept key keeps the first.
  EXPECT_FALSE(cache.Offer(CacheTestKey(2), image.view(), 0, true));
  // Larger than a shard's budget (two blocks): never kept.
  DecodedCache small(kCharge, DecodedCacheCompression::kNone, 1);
  EXPECT_FALSE(small.Offer(CacheTestKey(0), CacheTestImage(0, 74).view(), 1, true));
  const DecodedCacheStats stats = cache.stats();
  EXPECT_EQ(stats.rejections, 1u);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(small.stats().rejections, 1u);
  EXPECT_EQ(small.stats().entries, 0u);
}

TEST(DecodedCacheTest, CompressionShrinksWhatIsKept) {
  DecodedCache raw(1 << 20, DecodedCacheCompression::kNone, /*shards=*/1);
  DecodedCache lz4(1 << 20, DecodedCacheCompression::kLz4, /*shards=*/1);
  ImageBuffer flat;
  flat.Reshape({256, 256, 3, PixelType::kUint8});  // 12 blocks raw
  std::memset(flat.view().data, 90, flat.shape().bytes());
  ASSERT_TRUE(raw.Offer(CacheTestKey(0), flat.view(), 0, true));
  ASSERT_TRUE(lz4.Offer(CacheTestKey(0), flat.view(), 0, true));
  EXPECT_LT(lz4.stats().bytes * 10, raw.stats().bytes);
  ImageBuffer out;
  ASSERT_GE(lz4.Lookup(CacheTestKey(0), &out), 0);
  EXPECT_TRUE(SamePixels(out, flat.view()));
}

TEST(DecodedCacheTest, ACorruptedEntryIsDroppedCountedAndAMiss) {
  for (DecodedCacheCompression compression :
       {DecodedCacheCompression::kNone, DecodedCacheCompression::kLz4}) {
    DecodedCache cache(1 << 20, compression);
    const CacheTestImage image(4);
    ASSERT_TRUE(cache.Offer(CacheTestKey(7), image.view(), 0.5, true));
    ASSERT_TRUE(cache.CorruptForTest(CacheTestKey(7)));
    ImageBuffer out;
    EXPECT_LT(cache.Lookup(CacheTestKey(7), &out), 0);
    DecodedCacheStats stats = cache.stats();
    EXPECT_EQ(stats.checksum_failures, 1u);
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.hits, 0u);
    EXPECT_EQ(stats.entries, 0u);
    EXPECT_EQ(stats.bytes, 0u);
    EXPECT_DOUBLE_EQ(stats.saved_seconds, 0);
    // Decoded again and offered, it is kept and served.
    ASSERT_TRUE(cache.Offer(CacheTestKey(7), image.view(), 0.5, true));
    EXPECT_EQ(cache.Lookup(CacheTestKey(7), &out), 0.5);
    EXPECT_TRUE(SamePixels(out, image.view()));
  }
}

TEST(DecodedCacheTest, ConcurrentOffersAndLookupsStayBoundedAndServeTheRightPixels) {
  // 8 threads over 64 keys in a cache of 16 entries: evictions race with copies.
  DecodedCache cache(16 * kCharge, DecodedCacheCompression::kNone, /*shards=*/4);
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&cache, &wrong, t] {
      ImageBuffer out;
      for (uint32_t i = 0; i < 2000; ++i) {
        const uint32_t index = (i * 13 + static_cast<uint32_t>(t) * 7) % 64;
        if (cache.Lookup(CacheTestKey(index), &out) >= 0) {
          if (!SamePixels(out, CacheTestImage(index).view())) ++wrong[t];
        } else {
          cache.Offer(CacheTestKey(index), CacheTestImage(index).view(), 0.001, true);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  const DecodedCacheStats stats = cache.stats();
  EXPECT_LE(stats.bytes, 16 * kCharge);
  EXPECT_EQ(stats.hits + stats.misses, 8u * 2000);
  EXPECT_EQ(stats.insertions - stats.evictions, stats.entries);
  EXPECT_EQ(stats.checksum_failures, 0u);
}

TEST(DecodedCacheTest, AnOfferSaysWhenItMappedNewMemory) {
  DecodedCache cache(1 << 20, DecodedCacheCompression::kNone, /*shards=*/1);
  bool mapped = false;
  ASSERT_TRUE(cache.Offer(CacheTestKey(1), CacheTestImage(1).view(), 0.001, true, &mapped));
  EXPECT_TRUE(mapped);  // the shard's first chunk
  mapped = false;
  ASSERT_TRUE(cache.Offer(CacheTestKey(2), CacheTestImage(2).view(), 0.001, true, &mapped));
  EXPECT_FALSE(mapped);  // a block of that chunk
  DecodedCache pretouched(1 << 20, DecodedCacheCompression::kNone, /*shards=*/1);
  ASSERT_TRUE(pretouched.Pretouch());
  ASSERT_TRUE(pretouched.Offer(CacheTestKey(1), CacheTestImage(1).view(), 0.001, true, &mapped));
  EXPECT_FALSE(mapped);
}

TEST(DecodedCacheTest, PretouchMapsEveryShardsArenaWholeAndEntriesUseThoseBlocks) {
  constexpr uint64_t kShards = 4, kBlocksPerShard = 50;
  DecodedCache cache(kShards * kBlocksPerShard * DecodedCache::BlockCharge(1),
                     DecodedCacheCompression::kNone, kShards);
  EXPECT_EQ(cache.stats().mapped_bytes, 0u);
  ASSERT_TRUE(cache.Pretouch());
  const uint64_t whole = kShards * kBlocksPerShard * DecodedCache::kBlockBytes;
  EXPECT_EQ(cache.stats().mapped_bytes, whole);
  for (uint32_t i = 0; i < 40; ++i) {
    ASSERT_TRUE(cache.Offer(CacheTestKey(i), CacheTestImage(i).view(), 0.001, /*force=*/true));
  }
  ImageBuffer out;
  for (uint32_t i = 0; i < 40; ++i) {
    ASSERT_GE(cache.Lookup(CacheTestKey(i), &out), 0) << i;
    EXPECT_TRUE(SamePixels(out, CacheTestImage(i).view())) << i;
  }
  EXPECT_EQ(cache.stats().mapped_bytes, whole);
}

TEST(DecodedCacheTest, CompressionNamesParse) {
  EXPECT_EQ(*ParseDecodedCacheCompression("lz4", "f"), DecodedCacheCompression::kLz4);
  EXPECT_EQ(*ParseDecodedCacheCompression("none", "f"), DecodedCacheCompression::kNone);
  EXPECT_EQ(
      ParseDecodedCacheCompression("zstd", "decoded_cache_compression").status(),
      absl::InvalidArgumentError("decoded_cache_compression: must be 'none' or 'lz4', got 'zstd'"));
}

TEST(DecodedCacheGroupsTest, JobsOnTheSameDataAndPrefixAreOneGroupWhileTheyHoldTheirHandles) {
  std::shared_ptr<const void> a, b, other, late;
  {
    DecodedCache cache(1 << 20, DecodedCacheCompression::kNone);
    DecodedCacheGroups& groups = cache.groups();
    EXPECT_EQ(groups.Members({1, 2}), 0u);
    a = groups.Join({1, 2});
    b = groups.Join({1, 2});
    other = groups.Join({1, 3});  // another prefix: another group
    EXPECT_EQ(groups.Members({1, 2}), 2u);
    EXPECT_EQ(groups.Members({1, 3}), 1u);
    b.reset();
    EXPECT_EQ(groups.Members({1, 2}), 1u);
    late = groups.Join({1, 2});
  }
  // Handles outlive the cache that made them (a job dropped after its worker's cache).
  a.reset();
  late.reset();
  other.reset();
}

}  // namespace
}  // namespace stoker
