#ifndef STOKER_COORDINATOR_LEASE_INDEX_H_
#define STOKER_COORDINATOR_LEASE_INDEX_H_

// The indexes that let ClusterState find leases without a scan: every lease by its expiry (the
// expired ones, the earliest expiry) and the leases each worker holds (a lost worker's). The
// leases themselves live in ClusterState, per (job, rank) by sequence; this index must be told
// of every lease added, released or removed there, and holds nothing else.
//
// Thread-compatible: ClusterState's owner serializes access.

#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace stoker {

class LeaseIndex {
 public:
  // Where a lease sits: (job, rank, sequence).
  using Key = std::tuple<uint64_t, uint32_t, uint64_t>;
  // The holder of a lease no worker holds any more (it released it); no worker id is 0.
  static constexpr uint64_t kNoHolder = 0;

  // A lease at `key` that expires at `expires_unix_ms`, held by `holder` (kNoHolder: by none).
  void Add(const Key& key, int64_t expires_unix_ms, uint64_t holder);
  // The lease at `key`, added with these arguments (its holder since released: kNoHolder, or
  // still `holder`), is gone.
  void Remove(const Key& key, int64_t expires_unix_ms, uint64_t holder);
  // `holder` released the lease at `key`: it still expires, but is no longer the worker's.
  void Release(const Key& key, uint64_t holder);

  // The earliest expiry of any lease; nullopt when there is none.
  std::optional<int64_t> EarliestExpiry() const;
  // The lease that expires first, when it expires at or before `now_unix_ms`.
  std::optional<Key> FirstExpiredBy(int64_t now_unix_ms) const;
  // The leases `holder` holds, in key order (none for kNoHolder).
  std::vector<Key> HeldBy(uint64_t holder) const;

 private:
  std::set<std::tuple<int64_t, Key>> by_expiry_;
  absl::flat_hash_map<uint64_t, std::set<Key>> by_holder_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_LEASE_INDEX_H_
