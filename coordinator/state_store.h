#ifndef STOKER_COORDINATOR_STATE_STORE_H_
#define STOKER_COORDINATOR_STATE_STORE_H_

// Where the coordinator keeps what must survive a restart (docs/architecture.md, State and
// journal): an ordered log of durable StateUpdates, optionally starting with a `restore` snapshot.
// The file journal (journal.h) implements it; another backend (etcd) can replace it.
//
// Protocol: under the coordinator's lock, each durable update is Add()ed right after it is
// applied (so the log order is the apply order); after releasing the lock, the RPC calls
// Sync(seq) with the last sequence it saw and replies only once that returns OK. Concurrent
// Syncs share one write+fsync (group commit). SyncThen is Sync without a thread waiting per
// caller: the reply is sent from the thread whose commit made the record durable.

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/histogram.h"
#include "stoker/v1/journal.pb.h"

namespace stoker {

// Implementations are thread-safe.
class StateStore {
 public:
  virtual ~StateStore() = default;

  // Everything stored, in order, to replay into an empty ClusterState. Call once, before Add.
  // DATA_LOSS when stored records are corrupt (the message names where); a torn last record
  // (a crash mid-append) is not an error: it is dropped and logged.
  virtual absl::StatusOr<std::vector<stoker::v1::StateUpdate>> Load() = 0;

  // Queues `update`; returns its sequence number (1, 2, ...). Not durable until Sync.
  virtual uint64_t Add(const stoker::v1::StateUpdate& update) = 0;
  // The sequence number of the last Add (0 before any).
  virtual uint64_t last_added() const = 0;
  // Returns once every update through `seq` is durable. INTERNAL when writing failed (the store
  // then fails every later Sync: the coordinator must not reply as if it were durable).
  virtual absl::Status Sync(uint64_t seq) = 0;
  // Calls `done` with what Sync(seq) returns, once it would return: here, or later on the thread
  // whose write made `seq` durable (a store whose writes are slow, etcd, keeps no thread waiting
  // per caller), with no lock of the store held. The default Syncs on this thread.
  using SyncDone = absl::AnyInvocable<void(absl::Status)>;
  virtual void SyncThen(uint64_t seq, SyncDone done) { done(Sync(seq)); }
  // OK while the store takes writes; once a write failed, the error every later Sync returns.
  virtual absl::Status failure() const = 0;

  // A `restore` update and the last sequence it covers.
  struct Snapshot {
    stoker::v1::StateUpdate update;
    uint64_t through = 0;
  };
  // Replaces everything stored through the snapshot's `through` with the snapshot, atomically;
  // updates Added after it stay queued. `take_snapshot` runs once, when no Sync is writing, with
  // no lock of the store held (it may take the caller's lock, under which Add is called), so
  // that the file I/O happens outside the caller's lock.
  virtual absl::Status Compact(const std::function<Snapshot()>& take_snapshot) = 0;
  // Compact with `snapshot` covering every update Added so far.
  absl::Status Compact(const stoker::v1::StateUpdate& snapshot) {
    return Compact([&] { return Snapshot{snapshot, last_added()}; });
  }
  // Bytes stored since the last Compact (or Load), for deciding when to compact.
  virtual uint64_t bytes_since_compact() const = 0;

  // What the store did since it opened, for metrics.
  struct Stats {
    uint64_t bytes_stored = 0;  // bytes_since_compact()
    uint64_t bytes_written_total = 0;
    bool failed = false;  // failure() is not OK
    // The backend refused the last write for space (etcd's quota, its NOSPACE alarm): cleared
    // by the next write that succeeds. Refusals counted since the store opened.
    bool quota_exhausted = false;
    uint64_t quota_refusals_total = 0;
    Histogram sync_seconds{{1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0}};
  };
  virtual Stats stats() const = 0;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_STATE_STORE_H_
