#include "worker/decoded_cache_arena.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "worker/decoded_cache.h"

namespace stoker {
namespace {

constexpr uint64_t kBlocksPerChunk =
    DecodedCacheArena::kChunkBytes / DecodedCacheArena::kBlockBytes;

TEST(DecodedCacheArenaTest, MapAllMapsEveryBlockUpFrontSoTakeMapsNothingMore) {
  DecodedCacheArena arena(2 * kBlocksPerChunk + 3);
  ASSERT_TRUE(arena.MapAll());
  EXPECT_EQ(arena.mapped_bytes(), (2 * kBlocksPerChunk + 3) * DecodedCacheArena::kBlockBytes);
  EXPECT_EQ(arena.available(), 2 * kBlocksPerChunk + 3);
  ASSERT_TRUE(arena.MapAll());  // nothing left to map: a no-op
  std::vector<uint8_t*> blocks;
  ASSERT_TRUE(arena.Take(2 * kBlocksPerChunk + 3, &blocks));
  EXPECT_EQ(arena.mapped_bytes(), (2 * kBlocksPerChunk + 3) * DecodedCacheArena::kBlockBytes);
  EXPECT_EQ(absl::flat_hash_set<uint8_t*>(blocks.begin(), blocks.end()).size(), blocks.size());
  for (uint8_t* block : blocks) std::memset(block, 0xcd, DecodedCacheArena::kBlockBytes);
  arena.Give(blocks);
}

TEST(DecodedCacheArenaTest, MapsLazilyInAlignedChunksAndReusesGivenBlocks) {
  DecodedCacheArena arena(kBlocksPerChunk + 10);
  EXPECT_EQ(arena.mapped_bytes(), 0u);
  std::vector<uint8_t*> blocks;
  ASSERT_TRUE(arena.Take(1, &blocks));
  EXPECT_EQ(arena.mapped_bytes(), DecodedCacheArena::kChunkBytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks[0]) % DecodedCacheArena::kChunkBytes, 0u);
  // The rest of the first chunk, then a last chunk cut to the 10 blocks left.
  ASSERT_TRUE(arena.Take(kBlocksPerChunk + 9, &blocks));
  EXPECT_EQ(arena.mapped_bytes(), (kBlocksPerChunk + 10) * DecodedCacheArena::kBlockBytes);
  EXPECT_EQ(arena.available(), 0u);
  const absl::flat_hash_set<uint8_t*> distinct(blocks.begin(), blocks.end());
  EXPECT_EQ(distinct.size(), blocks.size());
  for (uint8_t* block : blocks) std::memset(block, 0xab, DecodedCacheArena::kBlockBytes);
  // Past the most: refused, nothing taken.
  std::vector<uint8_t*> more;
  EXPECT_FALSE(arena.Take(1, &more));
  EXPECT_TRUE(more.empty());
  // Given back, the same blocks come out again; nothing more is mapped.
  arena.Give(absl::MakeConstSpan(blocks).subspan(0, 5));
  EXPECT_EQ(arena.available(), 5u);
  ASSERT_TRUE(arena.Take(5, &more));
  EXPECT_EQ(absl::flat_hash_set<uint8_t*>(more.begin(), more.end()),
            absl::flat_hash_set<uint8_t*>(blocks.begin(), blocks.begin() + 5));
  EXPECT_EQ(arena.mapped_bytes(), (kBlocksPerChunk + 10) * DecodedCacheArena::kBlockBytes);
}

// A side x side x 3 image whose bytes depend on `seed` and differ from block to block.
ImageBuffer ArenaTestImage(uint32_t seed, uint32_t side) {
  ImageBuffer buffer;
  buffer.Reshape({side, side, 3, PixelType::kUint8});
  auto* p = static_cast<uint8_t*>(buffer.view().data);
  for (size_t i = 0; i < buffer.shape().bytes(); ++i) {
    p[i] = static_cast<uint8_t>((i * 2654435761u + seed * 40503u) >> 13);
  }
  return buffer;
}

bool ArenaSamePixels(const ImageBuffer& a, const ImageBuffer& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.view().data, b.view().data, b.shape().bytes()) == 0;
}

TEST(DecodedCacheArenaTest, EntriesAcrossBlockBoundariesComeBackIntactAndACorruptBlockIsCaught) {
  for (DecodedCacheCompression compression :
       {DecodedCacheCompression::kNone, DecodedCacheCompression::kLz4}) {
    DecodedCache cache(8 << 20, compression, /*shards=*/1);
    // 43,200 bytes: two full blocks and part of a third.
    const ImageBuffer image = ArenaTestImage(1, 120);
    ASSERT_TRUE(cache.Offer({1, 1, 1}, image.view(), 0.5, true));
    ImageBuffer out;
    ASSERT_EQ(cache.Lookup({1, 1, 1}, &out), 0.5);
    EXPECT_TRUE(ArenaSamePixels(out, image));
    // A bit flipped in the middle block: the crc over all blocks catches it.
    ASSERT_TRUE(cache.CorruptForTest({1, 1, 1}));
    EXPECT_LT(cache.Lookup({1, 1, 1}, &out), 0);
    EXPECT_EQ(cache.stats().checksum_failures, 1u);
    EXPECT_EQ(cache.stats().entries, 0u);
  }
}

TEST(DecodedCacheArenaTest, AFullCacheReusesEvictedBlocksAndStaysWithinItsCapacity) {
  // Room for about 30 entries of 12 blocks (256x256x3), three chunks, in one shard; 120 offered.
  const uint64_t capacity = 30 * DecodedCache::Charge(256 * 256 * 3);
  DecodedCache cache(capacity, DecodedCacheCompression::kNone, /*shards=*/1);
  uint64_t mapped_when_full = 0;
  for (uint32_t i = 0; i < 120; ++i) {
    ASSERT_TRUE(cache.Offer({1, i, 1}, ArenaTestImage(i, 256).view(), 0, true)) << i;
    const DecodedCacheStats stats = cache.stats();
    EXPECT_LE(stats.bytes, capacity);
    EXPECT_LE(stats.mapped_bytes + stats.entries * DecodedCache::kEntryOverheadBytes, capacity);
    if (i == 0) {
      EXPECT_EQ(stats.mapped_bytes, DecodedCacheArena::kChunkBytes);  // lazily
    }
    if (i == 40) mapped_when_full = stats.mapped_bytes;
    if (i > 40) {
      EXPECT_EQ(stats.mapped_bytes, mapped_when_full) << i;
    }
  }
  const DecodedCacheStats stats = cache.stats();
  EXPECT_GT(mapped_when_full, 2 * DecodedCacheArena::kChunkBytes);
  EXPECT_GE(stats.evictions, 90u);
  EXPECT_GE(stats.entries, 28u);
  // The newest entries, written into reused blocks, are intact.
  ImageBuffer out;
  for (uint32_t i = 110; i < 120; ++i) {
    ASSERT_GE(cache.Lookup({1, i, 1}, &out), 0) << i;
    EXPECT_TRUE(ArenaSamePixels(out, ArenaTestImage(i, 256))) << i;
  }
}

TEST(DecodedCacheArenaTest, ConcurrentOffersEvictionsAndHitsServeTheRightPixels) {
  // 8 threads over 48 keys of 2-3 blocks in room for about 16: evictions race with copies.
  const uint64_t capacity = 4 * 4 * DecodedCache::Charge(120 * 120 * 3);
  DecodedCache cache(capacity, DecodedCacheCompression::kNone, /*shards=*/4);
  std::vector<ImageBuffer> images;
  for (uint32_t i = 0; i < 48; ++i) images.push_back(ArenaTestImage(i, 100 + i % 21));
  std::vector<int> wrong(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      ImageBuffer out;
      for (uint32_t i = 0; i < 1500; ++i) {
        const uint32_t index = (i * 13 + static_cast<uint32_t>(t) * 7) % 48;
        if (cache.Lookup({1, index, 1}, &out) >= 0) {
          if (!ArenaSamePixels(out, images[index])) ++wrong[t];
        } else {
          cache.Offer({1, index, 1}, images[index].view(), 0, true);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  const DecodedCacheStats stats = cache.stats();
  EXPECT_LE(stats.bytes, capacity);
  EXPECT_LE(stats.mapped_bytes + stats.entries * DecodedCache::kEntryOverheadBytes, capacity);
  EXPECT_GT(stats.evictions, 0u);
  EXPECT_GT(stats.hits, 0u);
  EXPECT_EQ(stats.insertions - stats.evictions, stats.entries);
  EXPECT_EQ(stats.checksum_failures, 0u);
}

}  // namespace
}  // namespace stoker
