#include "worker/decoded_cache.h"

#include <sys/mman.h>

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

namespace stoker {

// An entry's stored bytes. From 64 KiB up they are mapped with MAP_POPULATE: one call faults all
// their pages in, where a fresh heap block took one fault per page as the copy first touched it
// (48 for a 224x224 RGB image; on a VM that was 0.6 ms of a 1.5 ms miss).
class DecodedCache::EntryBytes {
 public:
  static constexpr size_t kMappedFrom = 64 << 10;

  explicit EntryBytes(size_t size) : size_(size) {
    if (size >= kMappedFrom) {
      void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (mapped != MAP_FAILED) {
        data_ = static_cast<uint8_t*>(mapped);
        mapped_ = true;
        return;
      }
    }
    data_ = new uint8_t[size];
  }
  ~EntryBytes() {
    if (mapped_) {
      munmap(data_, size_);
    } else {
      delete[] data_;
    }
  }
  EntryBytes(const EntryBytes&) = delete;
  EntryBytes& operator=(const EntryBytes&) = delete;

  uint8_t* get() const { return data_; }
  uint8_t& operator[](size_t i) const { return data_[i]; }

 private:
  const size_t size_;
  uint8_t* data_ = nullptr;
  bool mapped_ = false;
};

struct DecodedCache::Entry {
  ImageShape shape;
  std::unique_ptr<EntryBytes> bytes;  // raw pixels, or one lz4 frame of them
  size_t size = 0;
  uint32_t crc = 0;  // of bytes[0, size)
  double prefix_seconds = 0;
  uint64_t charge = 0;  // size + kEntryOverheadBytes
};

struct DecodedCache::Shard {
  struct Slot {
    DecodedCacheKey key;
    std::shared_ptr<Entry> entry;
    bool referenced = false;
  };
  using Ring = std::list<Slot>;

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

DecodedCache::DecodedCache(uint64_t capacity_bytes, DecodedCacheCompression compression,
                           size_t shards)
    : capacity_bytes_(capacity_bytes),
      shard_budget_(capacity_bytes / std::max<size_t>(shards, 1)),
      compression_(compression) {
  for (size_t i = 0; i < std::max<size_t>(shards, 1); ++i) {
    shards_.push_back(std::make_unique<Shard>());
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
      entry = it->second->entry;  // keeps the bytes alive through the copy below
    }
  }
  if (entry == nullptr) {
    shard.misses.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  bool intact = Crc32c(entry->bytes->get(), entry->size) == entry->crc;
  if (intact) {
    out->Reshape(entry->shape);
    const auto pixels =
        absl::MakeSpan(static_cast<uint8_t*>(out->view().data), entry->shape.bytes());
    if (compression_ == DecodedCacheCompression::kLz4) {
      intact = DecompressPayload(v1::COMPRESSION_LZ4,
                                 absl::MakeConstSpan(entry->bytes->get(), entry->size), pixels)
                   .ok();
    } else {
      std::memcpy(pixels.data(), entry->bytes->get(), pixels.size());
    }
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
                         bool force) {
  Shard& shard = ShardOf(key);
  auto reject = [&shard] {
    shard.rejections.fetch_add(1, std::memory_order_relaxed);
    return false;
  };
  const size_t raw_size = image.shape.bytes();
  const auto pixels = absl::MakeConstSpan(static_cast<const uint8_t*>(image.data), raw_size);
  auto admitted = [&](size_t stored) {
    return force || prefix_seconds * 1e9 >= kMinPrefixNanosPerByte * static_cast<double>(stored);
  };
  // Refused raw, it is refused compressed too when not compressed: nothing to copy.
  if (compression_ == DecodedCacheCompression::kNone &&
      (!admitted(raw_size) || raw_size + kEntryOverheadBytes > shard_budget_)) {
    return reject();
  }
  {
    absl::MutexLock lock(&shard.mu);
    if (shard.index.contains(key)) return false;  // another thread kept it first
  }
  auto entry = std::make_shared<Entry>();
  entry->shape = image.shape;
  entry->prefix_seconds = prefix_seconds;
  if (compression_ == DecodedCacheCompression::kLz4) {
    PayloadBuffer frame;
    v1::CompressionChoice lz4;
    lz4.set_codec(v1::COMPRESSION_LZ4);
    if (!CompressPayload(lz4, pixels, &frame).ok()) return reject();
    entry->size = frame.size();
    entry->bytes = std::make_unique<EntryBytes>(entry->size);
    std::memcpy(entry->bytes->get(), frame.data(), entry->size);
  } else {
    entry->size = raw_size;
    entry->bytes = std::make_unique<EntryBytes>(entry->size);
    std::memcpy(entry->bytes->get(), pixels.data(), entry->size);
  }
  entry->charge = entry->size + kEntryOverheadBytes;
  if (!admitted(entry->size) || entry->charge > shard_budget_) return reject();
  entry->crc = Crc32c(entry->bytes->get(), entry->size);

  absl::MutexLock lock(&shard.mu);
  if (shard.index.contains(key)) return false;
  MakeRoomLocked(shard, entry->charge);
  // Behind the hand: the newest entry is the last the hand reaches.
  const auto slot = shard.ring.insert(shard.hand, Shard::Slot{key, std::move(entry), false});
  if (shard.hand == shard.ring.end()) shard.hand = slot;
  shard.index.emplace(key, slot);
  shard.bytes += slot->entry->charge;
  ++shard.insertions;
  return true;
}

void DecodedCache::MakeRoomLocked(Shard& shard, uint64_t bytes) {
  // Each pass clears a bit or evicts an entry: at most two turns of the ring.
  while (shard.bytes + bytes > shard_budget_ && !shard.ring.empty()) {
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
  }
  stats.saved_seconds = static_cast<double>(saved_nanos) * 1e-9;
  return stats;
}

bool DecodedCache::CorruptForTest(const DecodedCacheKey& key) {
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it == shard.index.end() || it->second->entry->size == 0) return false;
  (*it->second->entry->bytes)[it->second->entry->size / 2] ^= 0x10;
  return true;
}

}  // namespace stoker
