#ifndef STOKER_DATA_OPEN_SHARDS_H_
#define STOKER_DATA_OPEN_SHARDS_H_

// The shards a process holds open (a file handle and the record index of each), shared by every
// ShardSource (data/shard_source.h) handed the pool (data/dataset_io.h; one per binary): jobs
// over the same dataset share its open shards, keyed by location (and, for tar shards indexed for
// pass-through fields, by the extensions indexed: jobs wanting other fields hold their own index
// of the shard). Least recently used shards are closed beyond a count
// (--max-open-shards) or beyond a total of index bytes (--shard-index-bytes); a shard in use by a
// reader stays open until that reader lets go of it, so at most max_open plus the readers in
// flight are open at once. A shard evicted and wanted again is reopened and reindexed (its
// damage, if any, is logged again).

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "data/shard_reader.h"
#include "data/storage.h"

namespace stoker {

class Storage;  // data/storage_backend.h

struct OpenShardLimits {
  // Most shards held open (--max-open-shards).
  uint64_t max_open = 256;
  // Most bytes of record indexes held, about 24 a record (--shard-index-bytes).
  uint64_t index_bytes = uint64_t{256} << 20;

  // INVALID_ARGUMENT naming the field when a limit is 0.
  absl::Status Validate() const;
};

// An opened shard: its file and where each record lives. Immutable.
struct OpenShard {
  std::unique_ptr<RandomAccessFile> file;
  ShardIndex index;
  bool tar = false;

  uint64_t index_bytes() const;
};

// Thread-safe.
class OpenShardPool {
 public:
  explicit OpenShardPool(OpenShardLimits limits) : limits_(limits) {}

  // The shard at `location`, opened through `storage` and indexed on first use (other readers
  // of it wait for that one load). `expected_records` is what the manifest says it holds: a shard
  // holding other than that is logged when it is opened. Errors: the storage's and the index
  // loader's (not kept: the shard takes no place in the pool and the next call tries again).
  // `reads`: how a shard not open yet is opened (data/storage.h); an open shard is shared as is.
  // `field_extensions`: of a tar shard, the files indexed as fields (LoadTarShardIndex).
  absl::StatusOr<std::shared_ptr<const OpenShard>> Get(
      const Storage& storage, const std::string& location, uint64_t expected_records,
      RemoteReads reads = RemoteReads::kWholeShard,
      const std::vector<std::string>& field_extensions = {});

  // Shards held now, and the bytes of their indexes.
  uint64_t held() const;
  uint64_t held_index_bytes() const;

 private:
  struct Entry {
    absl::Mutex mu;  // Held while loading: one load per shard.
    std::shared_ptr<const OpenShard> shard ABSL_GUARDED_BY(mu);
    // The pool's fields of the entry, guarded by the pool's mu_.
    uint64_t index_bytes = 0;
    std::list<std::string>::iterator lru;
  };

  // The entry of `location`, made most recently used.
  std::shared_ptr<Entry> Touch(const std::string& location) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the entry of a shard that failed to open (if still `entry`): failures hold no place.
  void Forget(const std::string& location, const Entry* entry) ABSL_LOCKS_EXCLUDED(mu_);
  // Counts a freshly loaded entry, then closes least recently used ones beyond the limits.
  void Admit(const std::string& location, const Entry* entry, uint64_t index_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);

  const OpenShardLimits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // Most recently used first.
  uint64_t index_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker

#endif  // STOKER_DATA_OPEN_SHARDS_H_
