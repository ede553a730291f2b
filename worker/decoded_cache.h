#ifndef STOKER_WORKER_DECODED_CACHE_H_
#define STOKER_WORKER_DECODED_CACHE_H_

// Decode once (docs/decisions/0081-decoded-cache.md): a worker keeps the output of a pipeline's
// deterministic prefix (decode and the ops that draw nothing, Pipeline::RunPrefix) per sample, so
// that the next epoch, or another job on the same dataset and prefix, runs only the random suffix.
//
// Keyed by (dataset fingerprint, sample index, prefix fingerprint). An entry holds the image's
// shape, its uint8 pixels (raw, or one lz4 frame) and a crc32c of the stored bytes, checked on
// every hit: a mismatch drops the entry, counts a checksum failure and is a miss.
//
// Memory: each shard has a DecodedCacheArena of fixed blocks (worker/decoded_cache_arena.h) mapped
// lazily in 2 MiB chunks and reused after eviction; an entry's stored bytes fill its list of
// blocks. Bounded by `capacity_bytes`, counting each entry's blocks (kBlockBytes and a pointer
// each) plus kEntryOverheadBytes (Charge), split evenly over the shards (a key's shard is chosen by
// its hash; each shard has its own lock, so producer threads rarely meet). Eviction: CLOCK (second
// chance) per shard: a hit sets the entry's referenced bit; to make room the hand passes over the
// ring, clearing set bits and evicting the first entry whose bit is clear (at most two turns).
//
// Admission: an offered entry is kept when its prefix took at least kMinPrefixNanosPerByte
// (augment/decoded_cache_choice.h) of CPU per byte it would keep, or always when the offer is
// forced (DECODED_CACHE_ALWAYS jobs).
//
// A hit copies (or decompresses) the pixels into the caller's buffer. The copy is made outside the
// shard's lock from a shared_ptr to the entry taken under it: eviction only drops the shard's
// reference and an entry's blocks go back to the arena with its last reference, so an entry being
// copied is neither freed nor reused until the copy ends. A shard's arena maps at most its budget
// over BlockCharge(1) blocks, evicted entries still being copied included (an offer that needs
// their blocks is refused), so the mapped bytes plus the entries' overhead stay within
// capacity_bytes.
//
// Thread-safe.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "augment/decoded_cache_choice.h"
#include "image/image.h"
#include "worker/decoded_cache_arena.h"
#include "worker/decoded_cache_groups.h"

namespace stoker {

struct DecodedCacheKey {
  uint64_t dataset = 0;  // Source::fingerprint()
  uint64_t index = 0;    // the sample's dataset index
  uint64_t prefix = 0;   // Pipeline::prefix_fingerprint()

  bool operator==(const DecodedCacheKey& o) const {
    return dataset == o.dataset && index == o.index && prefix == o.prefix;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DecodedCacheKey& k) {
    return H::combine(std::move(h), k.dataset, k.index, k.prefix);
  }
};

enum class DecodedCacheCompression { kNone, kLz4 };

// "none" or "lz4"; INVALID_ARGUMENT naming `field` otherwise.
absl::StatusOr<DecodedCacheCompression> ParseDecodedCacheCompression(absl::string_view text,
                                                                     absl::string_view field);

struct DecodedCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t insertions = 0;
  uint64_t evictions = 0;
  uint64_t checksum_failures = 0;
  // Offers not kept: under the admission threshold, or larger than a shard's budget.
  uint64_t rejections = 0;
  // The prefix seconds recorded with each entry hit, summed: decode time not spent again.
  double saved_seconds = 0;
  uint64_t bytes = 0;         // charged: Charge(stored bytes) per entry
  uint64_t entries = 0;       // kept now
  uint64_t mapped_bytes = 0;  // the arenas' blocks, held or free
};

class DecodedCache {
 public:
  // What an entry costs beyond its blocks: the entry, its ring node and its index slot.
  static constexpr uint64_t kEntryOverheadBytes = 160;
  static constexpr size_t kBlockBytes = DecodedCacheArena::kBlockBytes;

  // `capacity_bytes` > 0; `shards` > 0 (each gets capacity_bytes / shards).
  DecodedCache(uint64_t capacity_bytes, DecodedCacheCompression compression, size_t shards = 16);
  ~DecodedCache();

  // A hit copies the entry's pixels into `out` (reshaped to the entry's shape) and returns the
  // prefix seconds recorded with it; a miss (absent, or its checksum fails) returns a negative
  // number and leaves `out` unspecified.
  double Lookup(const DecodedCacheKey& key, ImageBuffer* out);
  // Offers the prefix's output for `key`, which took `prefix_seconds` of CPU to make. Kept when
  // `force` or it meets the admission threshold, it fits a shard's budget and the key is not
  // already there; evicts to make room. True when kept; *mapped_memory (when given) is set when
  // keeping it mapped (and so prefaulted) a new chunk of the arena: a one-time cost, not the
  // entry's. REQUIRES: image is uint8.
  bool Offer(const DecodedCacheKey& key, const ImageView& image, double prefix_seconds, bool force,
             bool* mapped_memory = nullptr);

  // What an entry of `blocks` blocks charges.
  static constexpr uint64_t BlockCharge(size_t blocks) {
    return blocks * (kBlockBytes + sizeof(uint8_t*)) + kEntryOverheadBytes;
  }
  // The blocks `stored_bytes` fill: at least one, so that entries never outnumber blocks (the
  // bound on a shard's arena counts on it).
  static constexpr size_t BlocksFor(size_t stored_bytes) {
    return stored_bytes <= kBlockBytes ? 1 : (stored_bytes + kBlockBytes - 1) / kBlockBytes;
  }
  static constexpr uint64_t Charge(size_t stored_bytes) {
    return BlockCharge(BlocksFor(stored_bytes));
  }

  DecodedCacheStats stats() const;
  // Maps and touches every shard's whole arena now (--decoded-cache-pretouch), so that no entry
  // written later pays the kernel's first touch of its pages (zeroing 2 MiB per huge page: about
  // a third of a miss on the VMs measured). False if the kernel refused memory; entries still
  // take what was mapped, and map the rest lazily.
  bool Pretouch();
  uint64_t capacity_bytes() const { return capacity_bytes_; }
  // The jobs sharing entries (worker/decoded_cache_groups.h).
  DecodedCacheGroups& groups() { return groups_; }

  // Tests: flips a bit of the stored bytes of `key`'s entry (a memory error). False if absent.
  bool CorruptForTest(const DecodedCacheKey& key);

 private:
  class EntryBytes;
  struct Entry;
  struct Shard;

  Shard& ShardOf(const DecodedCacheKey& key);
  // Evicts from `shard` until `bytes` more fit its budget and its arena has `blocks` available,
  // or nothing is left to evict.
  void MakeRoomLocked(Shard& shard, uint64_t bytes, size_t blocks);

  const uint64_t capacity_bytes_;
  const uint64_t shard_budget_;
  const uint64_t shard_blocks_;  // each shard's arena's most
  const DecodedCacheCompression compression_;
  std::vector<std::unique_ptr<Shard>> shards_;
  DecodedCacheGroups groups_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_DECODED_CACHE_H_
