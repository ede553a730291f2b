#ifndef STOKER_WORKER_DECODED_CACHE_GROUPS_H_
#define STOKER_WORKER_DECODED_CACHE_GROUPS_H_

// Which of a worker's jobs may read the same decoded cache entries: jobs on the same data with the
// same prefix (a sweep's) form a group, keyed by the dataset's and the prefix's fingerprints. A
// job joins on its first sample through the cache and stays a member while it holds the handle
// Join returns. An AUTO job counts its group when it weighs the cache (decision 0084): each
// decode serves every member's passes.
//
// Thread-safe. Handles may outlive this object.

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace stoker {

class DecodedCacheGroups {
 public:
  using Key = std::pair<uint64_t, uint64_t>;  // (dataset fingerprint, prefix fingerprint)

  DecodedCacheGroups() : counts_(std::make_shared<Counts>()) {}

  // Membership of `key`'s group until the handle is destroyed.
  std::shared_ptr<const void> Join(const Key& key);
  // The members of `key`'s group now.
  uint32_t Members(const Key& key) const;

 private:
  struct Counts {
    mutable absl::Mutex mu;
    absl::flat_hash_map<Key, uint32_t> members ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<Counts> counts_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_DECODED_CACHE_GROUPS_H_
