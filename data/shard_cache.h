#ifndef STOKER_DATA_SHARD_CACHE_H_
#define STOKER_DATA_SHARD_CACHE_H_

// A worker-local, bounded, on-disk cache of whole remote shards (S3 or HTTP): the benefit of
// SageMaker's File mode without waiting for the whole bucket. The first open of a shard copies
// it into the cache; later opens, in this process or another one sharing the folder, after a
// restart too, read the local copy, so epoch 2+ of a job reads no bytes from the bucket.
//
// Layout: <dir>/<key>.shard, key = SHA-256 of the location and its size (an object rewritten
// with another size is another entry). Each entry ends with a 16-byte footer
// [crc32c of the content][magic "STKC"][content size] (u32, u32, u64, little-endian:
// common/byte_codec.h), written to <dir>/tmp/ and renamed into place, so an entry is whole or
// absent. An entry is checked against its CRC the first time a process opens it; a bad one is
// deleted and fetched again.
//
// Bounded by max_bytes (entries' sizes on disk): before an entry is added, the least recently
// used entries (by modification time, touched on every hit) are deleted until it fits, under
// an exclusive flock on <dir>/lock, so several processes share one budget. A reader holding an
// evicted entry open keeps reading it (POSIX unlink semantics). A shard larger than max_bytes
// is not cached: it is read from its source. Threads and processes opening the same shard wait
// for a single fill (an flock on <dir>/tmp/<key>.lock), then read the entry it made.

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "data/storage.h"

namespace stoker {

struct ShardCacheOptions {
  std::string dir;
  uint64_t max_bytes = 0;  // > 0.

  // INVALID_ARGUMENT naming cache_dir or cache_bytes.
  absl::Status Validate() const;
};

// Counters since the cache was opened (this process).
struct ShardCacheStats {
  uint64_t hits = 0;         // Opens served from the cache.
  uint64_t misses = 0;       // Opens that copied the shard in.
  uint64_t uncacheable = 0;  // Opens of a shard larger than the whole cache.
  uint64_t evictions = 0;
  uint64_t corrupt = 0;       // Entries whose CRC or footer was wrong (deleted).
  uint64_t bytes_filled = 0;  // Bytes copied from sources.
};

// Thread-safe, and safe with other processes using the same folder.
class ShardCache {
 public:
  // Creates the folder and deletes partial copies older than an hour that a dead process left.
  // UNAVAILABLE naming the folder when it cannot be created.
  static absl::StatusOr<std::unique_ptr<ShardCache>> Open(const ShardCacheOptions& options);

  // The contents of `source` from the cache, copying them in on a miss. Errors: the source's
  // read errors; UNAVAILABLE naming the cache file on a local I/O error.
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> Get(std::unique_ptr<RandomAccessFile> source);

  ShardCacheStats stats() const;
  // Bytes of entries on disk now (a directory scan).
  uint64_t DiskBytes() const;
  const ShardCacheOptions& options() const { return options_; }

 private:
  explicit ShardCache(ShardCacheOptions options) : options_(std::move(options)) {}
  // The verified entry at `path`, or nullptr when it is absent or bad (then deleted).
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenEntry(const std::string& path,
                                                              const std::string& name,
                                                              uint64_t size);
  absl::Status Fill(const RandomAccessFile& source, const std::string& path);
  // Deletes least recently used entries until `incoming` more bytes fit. REQUIRES: the flock.
  void MakeRoom(uint64_t incoming);

  const ShardCacheOptions options_;
  absl::Mutex mu_;
  std::set<std::string> verified_ ABSL_GUARDED_BY(mu_);  // Entries this process checked.
  std::atomic<uint64_t> hits_{0}, misses_{0}, uncacheable_{0}, evictions_{0}, corrupt_{0},
      bytes_filled_{0};
};

}  // namespace stoker

#endif  // STOKER_DATA_SHARD_CACHE_H_
