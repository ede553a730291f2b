#include "worker/decoded_cache_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace stoker {
namespace {

// `bytes` of fresh anonymous memory starting on a kChunkBytes boundary (so a huge page can back
// it), or nullptr. Maps one chunk more than asked and unmaps the unaligned head and the tail.
void* ArenaMapAligned(size_t bytes) {
  const size_t align = DecodedCacheArena::kChunkBytes;
  void* raw =
      mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + align - 1) & ~(uintptr_t{align} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const size_t tail = start + bytes + align - (aligned + bytes);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  void* chunk = reinterpret_cast<void*>(aligned);
  // Both best effort: without huge pages or MADV_POPULATE_WRITE (Linux < 5.14) the first copy
  // into a page faults it in, as a heap block would.
  madvise(chunk, bytes, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  madvise(chunk, bytes, MADV_POPULATE_WRITE);
#endif
  return chunk;
}

}  // namespace

DecodedCacheArena::DecodedCacheArena(uint64_t max_blocks) : max_blocks_(max_blocks) {}

DecodedCacheArena::~DecodedCacheArena() {
  absl::MutexLock lock(&mu_);
  for (const Chunk& chunk : chunks_) munmap(chunk.base, chunk.bytes);
}

uint64_t DecodedCacheArena::available() const {
  absl::MutexLock lock(&mu_);
  return free_.size() + (max_blocks_ - mapped_blocks_);
}

uint64_t DecodedCacheArena::mapped_bytes() const {
  absl::MutexLock lock(&mu_);
  return mapped_blocks_ * kBlockBytes;
}

bool DecodedCacheArena::Take(size_t n, std::vector<uint8_t*>* blocks, bool* mapped) {
  absl::MutexLock lock(&mu_);
  if (free_.size() + (max_blocks_ - mapped_blocks_) < n) return false;
  while (free_.size() < n) {
    if (!GrowLocked()) return false;
    if (mapped != nullptr) *mapped = true;
  }
  blocks->insert(blocks->end(), free_.end() - static_cast<ptrdiff_t>(n), free_.end());
  free_.resize(free_.size() - n);
  return true;
}

void DecodedCacheArena::Give(absl::Span<uint8_t* const> blocks) {
  absl::MutexLock lock(&mu_);
  free_.insert(free_.end(), blocks.begin(), blocks.end());
}

bool DecodedCacheArena::MapAll() {
  for (;;) {
    absl::MutexLock lock(&mu_);
    if (mapped_blocks_ == max_blocks_) return true;
    if (!GrowLocked()) return false;
  }
}

bool DecodedCacheArena::GrowLocked() {
  const uint64_t blocks =
      std::min<uint64_t>(kChunkBytes / kBlockBytes, max_blocks_ - mapped_blocks_);
  if (blocks == 0) return false;
  auto* base = static_cast<uint8_t*>(ArenaMapAligned(blocks * kBlockBytes));
  if (base == nullptr) return false;
  chunks_.push_back({base, blocks * kBlockBytes});
  mapped_blocks_ += blocks;
  // Pushed last block first: Take pops from the back, so a chunk is used in address order.
  for (uint64_t i = blocks; i > 0; --i) free_.push_back(base + (i - 1) * kBlockBytes);
  return true;
}

}  // namespace stoker
