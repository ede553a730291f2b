#ifndef STOKER_WORKER_DECODED_CACHE_ARENA_H_
#define STOKER_WORKER_DECODED_CACHE_ARENA_H_

// The decoded cache's memory (docs/decisions/0081-decoded-cache.md): fixed blocks cut from
// 2 MiB-aligned chunks mapped from the kernel lazily, at most `max_blocks` in all, and reused
// through a free list: an evicted entry's blocks go to the next entry without a trip to the kernel
// (no munmap, no fresh pages to fault in once the arena is full).
//
// A chunk is advised MADV_HUGEPAGE (one fault can give 2 MiB where the kernel has a huge page)
// and prefaulted with MADV_POPULATE_WRITE when it is mapped, so the copy into a block never faults.
// MapAll maps every chunk at once (the worker's --decoded-cache-pretouch).
//
// Thread-safe: blocks are given back by whichever thread drops an entry's last reference.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace stoker {

class DecodedCacheArena {
 public:
  // 16 KiB: a 256x256 RGB entry is exactly 12 blocks; an lz4 frame or another shape wastes half a
  // block on average (8 KiB, 4% of such an entry, where 64 KiB blocks would waste 16%), and a
  // block is large enough that copying block by block costs nothing over one memcpy.
  static constexpr size_t kBlockBytes = 16 << 10;
  static constexpr size_t kChunkBytes = 2 << 20;

  explicit DecodedCacheArena(uint64_t max_blocks);
  ~DecodedCacheArena();
  DecodedCacheArena(const DecodedCacheArena&) = delete;
  DecodedCacheArena& operator=(const DecodedCacheArena&) = delete;

  // Blocks free now or still mappable.
  uint64_t available() const;
  // Appends `n` blocks to `blocks`: free ones first, then from newly mapped chunks (then *mapped,
  // when given, is set). False (nothing taken) when fewer than `n` are available or the kernel
  // refuses a chunk.
  bool Take(size_t n, std::vector<uint8_t*>* blocks, bool* mapped = nullptr);
  // Blocks from Take, free again.
  void Give(absl::Span<uint8_t* const> blocks);
  // Maps (and so prefaults) every block still mappable now, a chunk at a time, the lock taken per
  // chunk. False if the kernel refused a chunk (what was mapped stays).
  bool MapAll();

  uint64_t max_blocks() const { return max_blocks_; }
  uint64_t mapped_bytes() const;

 private:
  // Maps one chunk (at most the blocks still mappable) onto the free list.
  bool GrowLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Chunk {
    void* base;
    size_t bytes;
  };

  const uint64_t max_blocks_;
  mutable absl::Mutex mu_;
  std::vector<uint8_t*> free_ ABSL_GUARDED_BY(mu_);
  std::vector<Chunk> chunks_ ABSL_GUARDED_BY(mu_);
  uint64_t mapped_blocks_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker

#endif  // STOKER_WORKER_DECODED_CACHE_ARENA_H_
