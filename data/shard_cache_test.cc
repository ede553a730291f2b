// The shard cache with local files standing in for remote shards: hits and misses, LRU
// eviction within the budget, checksums, restarts and concurrent users.

#include "data/shard_cache.h"

#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::stoker::testing::ReadFile;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;

class ShardCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<ShardCache> Cache(uint64_t max_bytes) {
    auto cache = ShardCache::Open({dir_.File("cache"), max_bytes});
    EXPECT_TRUE(cache.ok()) << cache.status();
    return *std::move(cache);
  }
  // A "remote" shard of `size` bytes.
  std::string Shard(const std::string& name, size_t size) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 31 + name.size());
    WriteFile(dir_.File(name), bytes);
    return dir_.File(name);
  }
  std::string ReadAll(ShardCache& cache, const std::string& path) {
    auto file = cache.Get(*OpenLocalFile(path));
    EXPECT_TRUE(file.ok()) << file.status();
    std::string bytes((*file)->size(), '\0');
    EXPECT_TRUE((*file)->ReadAt(0, bytes.size(), reinterpret_cast<uint8_t*>(bytes.data())).ok());
    EXPECT_EQ((*file)->name(), path);
    return bytes;
  }
  std::vector<std::string> Entries() {
    std::vector<std::string> out;
    const std::vector<StorageEntry> entries = ListLocalFolder(dir_.File("cache")).value();
    for (const StorageEntry& e : entries) {
      if (absl::EndsWith(e.location, ".shard")) out.push_back(e.location);
    }
    return out;
  }
  TempDir dir_;
};

TEST_F(ShardCacheTest, SecondOpenIsAHitWithTheSameBytes) {
  auto cache = Cache(1 << 20);
  const std::string shard = Shard("a", 5000);
  EXPECT_EQ(ReadAll(*cache, shard), ReadFile(shard));
  EXPECT_EQ(ReadAll(*cache, shard), ReadFile(shard));
  EXPECT_EQ(cache->stats().misses, 1u);
  EXPECT_EQ(cache->stats().hits, 1u);
  EXPECT_EQ(cache->stats().bytes_filled, 5000u);
  EXPECT_EQ(cache->DiskBytes(), 5016u);  // Content and footer.
}

TEST_F(ShardCacheTest, SurvivesARestart) {
  const std::string shard = Shard("a", 3000);
  ReadAll(*Cache(1 << 20), shard);
  auto restarted = Cache(1 << 20);
  EXPECT_EQ(ReadAll(*restarted, shard), ReadFile(shard));
  EXPECT_EQ(restarted->stats().hits, 1u);
  EXPECT_EQ(restarted->stats().misses, 0u);
}

TEST_F(ShardCacheTest, EvictsTheLeastRecentlyUsedWithinTheBudget) {
  auto cache = Cache(2 * 1016 + 100);  // Room for two 1000-byte shards.
  const std::string a = Shard("a", 1000), b = Shard("b", 1000), c = Shard("c", 1000);
  ReadAll(*cache, a);
  ReadAll(*cache, b);
  ReadAll(*cache, a);  // a is now the most recently used.
  ReadAll(*cache, c);  // Evicts b.
  EXPECT_EQ(cache->stats().evictions, 1u);
  EXPECT_LE(cache->DiskBytes(), 2 * 1016u + 100);
  ReadAll(*cache, a);
  EXPECT_EQ(cache->stats().hits, 2u);
  ReadAll(*cache, b);
  EXPECT_EQ(cache->stats().misses, 4u);  // a, b, c, b again.
}

TEST_F(ShardCacheTest, ShardsLargerThanTheCacheAreReadFromTheSource) {
  auto cache = Cache(500);
  const std::string big = Shard("big", 1000);
  EXPECT_EQ(ReadAll(*cache, big), ReadFile(big));
  EXPECT_EQ(cache->stats().uncacheable, 1u);
  EXPECT_TRUE(Entries().empty());
}

TEST_F(ShardCacheTest, ACorruptEntryIsDeletedAndFetchedAgain) {
  const std::string shard = Shard("a", 4000);
  ReadAll(*Cache(1 << 20), shard);
  ASSERT_EQ(Entries().size(), 1u);
  std::string entry = ReadFile(Entries()[0]);
  entry[100] ^= 1;
  WriteFile(Entries()[0], entry);
  auto restarted = Cache(1 << 20);  // A new process checks each entry's CRC once.
  EXPECT_EQ(ReadAll(*restarted, shard), ReadFile(shard));
  EXPECT_EQ(restarted->stats().corrupt, 1u);
  EXPECT_EQ(restarted->stats().misses, 1u);
}

TEST_F(ShardCacheTest, ManyThreadsAndTwoCachesOnOneFolder) {
  auto first = Cache(64 * 1024);
  auto second = Cache(64 * 1024);  // Another process's view of the same folder.
  std::vector<std::string> shards;
  for (int i = 0; i < 8; ++i) shards.push_back(Shard(absl::StrCat("s", i), 4000 + i));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ShardCache& cache = t % 2 == 0 ? *first : *second;
      for (int round = 0; round < 3; ++round) {
        for (const std::string& shard : shards) EXPECT_EQ(ReadAll(cache, shard), ReadFile(shard));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(Entries().size(), 8u);
  EXPECT_EQ(first->stats().misses + second->stats().misses, 8u);  // One fill per shard.
  EXPECT_EQ(first->stats().corrupt + second->stats().corrupt, 0u);
}

}  // namespace
}  // namespace stoker
