#include "worker/decoded_cache.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/crc32c.h"
#include "common/payload_codec.h"
#include "worker/decoded_cache_arena.h"

namespace stoker {

// An entry's stored bytes fill its blocks in order (the last partly). The blocks go back to the
// shard's arena when the last reference goes: an entry being copied by a hit is not reused.
struct DecodedCache::Entry {
  explicit Entry(DecodedCacheArena* arena) : arena(arena) {}
  ~Entry() { arena->Give(blocks); }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

  DecodedCacheArena* const arena;
  std::vector<uint8_t*> blocks;
  ImageShape shape;
  size_t size = 0;   // raw pixels, or one lz4 frame of them
  uint32_t crc = 0;  // of the stored bytes
  double prefix_seconds = 0;
  uint64_t charge = 0;  // BlockCharge(blocks.size())
};

struct DecodedCache::Shard {
  explicit Shard(uint64_t max_blocks) : arena(max_blocks) {}

  struct Slot {
    DecodedCacheKey key;
    std::shared_ptr<Entry> entry;
    bool referenced = false;
  };
  using Ring = std::list<Slot>;

  // Before the ring: destroyed after it, when its entries have given their blocks back.
  DecodedCacheArena arena;
  absl::Mutex mu;
  Ring ring ABSL_GUARDED_BY(mu);
  Ring::iterator hand ABSL_GUARDED_BY(mu) = ring.end();
  absl::flat_hash_map<DecodedCacheKey, Ring::iterator> index ABSL_GUARDED_BY(mu);
  uint64_t bytes ABSL_GUARDED_BY(mu) = 0;
  uint64_t insertions ABSL_GUARDED_BY(mu) = 0;
  uint64_t evictions ABSL_GUARDED_BY(mu) = 0;
  // Counted outside the lock too (a hit is confirmed after the copy).
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> checksum_failures{0};
  std::atomic<uint64_t> rejections{0};
  std::atomic<uint64_t> saved_nanos{0};

  // Drops `it`, moving the hand past it first.
  void EraseLocked(Ring::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (hand == it) {
      ++hand;
      if (hand == ring.end()) hand = ring.begin();
      if (hand == it) hand = ring.end();  // it was the only entry
    }
    bytes -= it->entry->charge;
    index.erase(it->key);
    ring.erase(it);
  }
};

absl::StatusOr<DecodedCacheCompression> ParseDecodedCacheCompression(absl::string_view text,
                                                                     absl::string_view field) {
  if (text == "none") return DecodedCacheCompression::kNone;
  if (text == "lz4") return DecodedCacheCompression::kLz4;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": must be 'none' or 'lz4', got '", text, "'"));
}

namespace {

// Calls `fn(block, offset, n)` for each block of an entry of `size` stored bytes, in order.
template <typename Fn>
void DecodedCacheForEachBlock(absl::Span<uint8_t* const> blocks, size_t size, Fn fn) {
  for (size_t offset = 0, i = 0; offset < size; offset += DecodedCacheArena::kBlockBytes, ++i) {
    fn(blocks[i], offset, std::min(DecodedCacheArena::kBlockBytes, size - offset));
  }
}

// Copies an entry's stored bytes out into `dst` and returns their crc32c, each block summed
// while it is in the cache.
uint32_t DecodedCacheCopyOut(absl::Span<uint8_t* const> blocks, size_t size, uint8_t* dst) {
  uint32_t crc = 0;
  DecodedCacheForEachBlock(blocks, size, [&](const uint8_t* block, size_t offset, size_t n) {
    crc = Crc32cExtend(crc, block, n);
    std::memcpy(dst + offset, block, n);
  });
  return crc;
}

}  // namespace

DecodedCache::DecodedCache(uint64_t capacity_bytes, DecodedCacheCompression compression,
                           size_t shards)
    : capacity_bytes_(capacity_bytes),
      shard_budget_(capacity_bytes / std::max<size_t>(shards, 1)),
      // An entry has a block at least: a shard's mapped blocks plus its entries' overhead stay
      // within its budget however many entries share them.
      shard_blocks_(shard_budget_ / BlockCharge(1)),
      compression_(compression) {
  for (size_t i = 0; i < std::max<size_t>(shards, 1); ++i) {
    shards_.push_back(std::make_unique<Shard>(shard_blocks_));
  }
}

DecodedCache::~DecodedCache() = default;

DecodedCache::Shard& DecodedCache::ShardOf(const DecodedCacheKey& key) {
  // High bits: the shard's hash map probes by the low ones, which would all agree in a shard.
  const uint64_t hash = absl::Hash<DecodedCacheKey>{}(key);
  return *shards_[(hash >> 40) % shards_.size()];
}

double DecodedCache::Lookup(const DecodedCacheKey& key, ImageBuffer* out) {
  Shard& shard = ShardOf(key);
  std::shared_ptr<const Entry> entry;
  {
    absl::MutexLock lock(&shard.mu);
    auto it = shard.index.find(key);
    if (it != shard.index.end()) {
      it->second->referenced = true;
      entry = it->second->entry;  // keeps the blocks from reuse through the copy below
    }
  }
  if (entry == nullptr) {
    shard.misses.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  out->Reshape(entry->shape);
  const auto pixels = absl::MakeSpan(static_cast<uint8_t*>(out->view().data), entry->shape.bytes());
  bool intact;
  if (compression_ == DecodedCacheCompression::kLz4) {
    // The frame is gathered in one piece for the decoder; the buffer is kept for the next hit.
    thread_local std::vector<uint8_t> frame;
    frame.resize(entry->size);
    intact = DecodedCacheCopyOut(entry->blocks, entry->size, frame.data()) == entry->crc &&
             DecompressPayload(v1::COMPRESSION_LZ4, frame, pixels).ok();
  } else {
    intact = DecodedCacheCopyOut(entry->blocks, entry->size, pixels.data()) == entry->crc;
  }
  if (!intact) {
    shard.checksum_failures.fetch_add(1, std::memory_order_relaxed);
    shard.misses.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&shard.mu);
    auto it = shard.index.find(key);
    if (it != shard.index.end() && it->second->entry == entry) shard.EraseLocked(it->second);
    return -1;
  }
  shard.hits.fetch_add(1, std::memory_order_relaxed);
  shard.saved_nanos.fetch_add(static_cast<uint64_t>(entry->prefix_seconds * 1e9),
                              std::memory_order_relaxed);
  return entry->prefix_seconds;
}

bool DecodedCache::Offer(const DecodedCacheKey& key, const ImageView& image, double prefix_seconds,
                         bool force, bool* mapped_memory) {
  Shard& shard = ShardOf(key);
  auto reject = [&shard] {
    shard.rejections.fetch_add(1, std::memory_order_relaxed);
    return false;
  };
  const size_t raw_size = image.shape.bytes();
  const auto pixels = absl::MakeConstSpan(static_cast<const uint8_t*>(image.data), raw_size);
  auto admitted = [&](size_t stored) {
    return (force ||
            prefix_seconds * 1e9 >= kMinPrefixNanosPerByte * static_cast<double>(stored)) &&
           BlocksFor(stored) <= shard_blocks_;
  };
  // Refused raw, it is refused compressed too when not compressed: nothing to copy.
  if (compression_ == DecodedCacheCompression::kNone && !admitted(raw_size)) return reject();
  {
    absl::MutexLock lock(&shard.mu);
    if (shard.index.contains(key)) return false;  // another thread kept it first
  }
  PayloadBuffer frame;
  absl::Span<const uint8_t> stored = pixels;
  if (compression_ == DecodedCacheCompression::kLz4) {
    v1::CompressionChoice lz4;
    lz4.set_codec(v1::COMPRESSION_LZ4);
    if (!CompressPayload(lz4, pixels, &frame).ok()) return reject();
    stored = absl::MakeConstSpan(frame.data(), frame.size());
    if (!admitted(stored.size())) return reject();
  }
  auto entry = std::make_shared<Entry>(&shard.arena);
  entry->shape = image.shape;
  entry->prefix_seconds = prefix_seconds;
  entry->size = stored.size();
  entry->charge = Charge(entry->size);
  {
    // The blocks are taken, and their charge counted, before the copy, which runs unlocked.
    absl::MutexLock lock(&shard.mu);
    if (shard.index.contains(key)) return false;
    const size_t blocks = BlocksFor(entry->size);
    MakeRoomLocked(shard, entry->charge, blocks);
    // Still short: the blocks are held by evicted entries that hits are copying from.
    if (shard.bytes + entry->charge > shard_budget_ ||
        !shard.arena.Take(blocks, &entry->blocks, mapped_memory)) {
      return reject();
    }
    shard.bytes += entry->charge;
  }
  DecodedCacheForEachBlock(entry->blocks, entry->size,
                           [&](uint8_t* block, size_t offset, size_t n) {
                             std::memcpy(block, stored.data() + offset, n);
                             entry->crc = Crc32cExtend(entry->crc, block, n);
                           });

  absl::MutexLock lock(&shard.mu);
  if (shard.index.contains(key)) {
    shard.bytes -= entry->charge;
    return false;
  }
  // Behind the hand: the newest entry is the last the hand reaches.
  const auto slot = shard.ring.insert(shard.hand, Shard::Slot{key, std::move(entry), false});
  if (shard.hand == shard.ring.end()) shard.hand = slot;
  shard.index.emplace(key, slot);
  ++shard.insertions;
  return true;
}

void DecodedCache::MakeRoomLocked(Shard& shard, uint64_t bytes, size_t blocks) {
  // Each pass clears a bit or evicts an entry: at most two turns of the ring.
  while ((shard.bytes + bytes > shard_budget_ || shard.arena.available() < blocks) &&
         !shard.ring.empty()) {
    if (shard.hand == shard.ring.end()) shard.hand = shard.ring.begin();
    if (shard.hand->referenced) {
      shard.hand->referenced = false;
      ++shard.hand;
    } else {
      shard.EraseLocked(shard.hand);
      ++shard.evictions;
    }
  }
}

bool DecodedCache::Pretouch() {
  bool all = true;
  for (const std::unique_ptr<Shard>& shard : shards_) all = shard->arena.MapAll() && all;
  return all;
}

DecodedCacheStats DecodedCache::stats() const {
  DecodedCacheStats stats;
  uint64_t saved_nanos = 0;
  for (const std::unique_ptr<Shard>& shard : shards_) {
    stats.hits += shard->hits.load(std::memory_order_relaxed);
    stats.misses += shard->misses.load(std::memory_order_relaxed);
    stats.checksum_failures += shard->checksum_failures.load(std::memory_order_relaxed);
    stats.rejections += shard->rejections.load(std::memory_order_relaxed);
    saved_nanos += shard->saved_nanos.load(std::memory_order_relaxed);
    absl::MutexLock lock(&shard->mu);
    stats.insertions += shard->insertions;
    stats.evictions += shard->evictions;
    stats.bytes += shard->bytes;
    stats.entries += shard->index.size();
    stats.mapped_bytes += shard->arena.mapped_bytes();
  }
  stats.saved_seconds = static_cast<double>(saved_nanos) * 1e-9;
  return stats;
}

bool DecodedCache::CorruptForTest(const DecodedCacheKey& key) {
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it == shard.index.end() || it->second->entry->size == 0) return false;
  const size_t offset = it->second->entry->size / 2;
  it->second->entry->blocks[offset / kBlockBytes][offset % kBlockBytes] ^= 0x10;
  return true;
}

}  // namespace stoker
