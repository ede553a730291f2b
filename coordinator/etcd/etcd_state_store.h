#ifndef STOKER_COORDINATOR_ETCD_ETCD_STATE_STORE_H_
#define STOKER_COORDINATOR_ETCD_ETCD_STATE_STORE_H_

// EtcdStateStore: the StateStore (state_store.h) kept in etcd under a prefix, so that several
// coordinator replicas share it (docs/decisions/0073-coordinator-state-on-etcd.md).
//
// Keys under PREFIX (values: etcd_store_codec.h):
//   log/<20-digit first sequence>  one group commit's records, framed as the file journal's
//                                  (FileJournal::Frame, crc included); one key per transaction,
//                                  each under kMaxTxnBytes (a larger group commit takes several).
//   log/<20-digit sequence>.large  the manifest of one record over kMaxTxnBytes, whose parts
//                                  (<= 1 MiB each, a transaction each) are written before it at
//   large/<sequence>/<part>        (a resume_rank of many batches can be tens of MiB).
//   snap/meta                      the current snapshot: generation, `through`, chunks, checksum.
//   snap/<generation>/<chunk>      the snapshot (a `restore` update) in chunks of <= 1 MiB.
// Sequence numbers are global: a record's is its key's first sequence + its index there, and
// they continue across leaders (Load and TakeOver resume after the last one stored).
//
// Writes: Add queues a record under the store's lock; Sync writes everything queued in as few
// transactions as etcd's limits allow (1.5 MiB a request), concurrent Syncs sharing them
// (group commit). No thread waits per caller: SyncThen queues the caller's callback, and the
// store's writer thread writes everything queued while callbacks wait, then runs the callbacks
// that write settled (Sync is SyncThen and a wait). One write is in flight at a time. Every write
// transaction carries the fence (SetFence: the leader key's create revision compare); a transaction
// whose compare fails latches the store FAILED_PRECONDITION "etcd store: no longer the leader ...":
// a deposed leader never writes and never replies as if durable.
//
// Failures. A write that etcd may or may not have applied (UNAVAILABLE, DEADLINE_EXCEEDED) or
// surely refused for space (RESOURCE_EXHAUSTED: the backend quota, the NOSPACE alarm) does not
// latch: Sync returns it and the records stay queued, in order; the next Sync writes them again
// at the same keys. That cannot lose a record (the coordinator already applied it, and it stays
// queued until etcd confirms it) nor duplicate one (a key names its records' sequences, so a
// rewrite replaces the key or adds one whose sequences readers have seen and skip). Losing etcd
// for a while therefore costs availability, not state. RESOURCE_EXHAUSTED also sets
// Stats::quota_exhausted until a write succeeds. Any other write failure latches, as does a
// queue over kMaxQueuedBytes (etcd unreachable while requests keep coming): every later Sync
// returns that error, and the replica must step down and Load again.
//
// Compact writes the snapshot's chunks (a transaction each) under the next generation, then one
// transaction switches snap/meta to it and range-deletes the log keys (and large records'
// parts) it covers and every other generation's chunks; then it compacts etcd's revision
// history at that revision, so etcd's keyspace and history are bounded by live state. A crash
// in between leaves orphan chunks of a generation snap/meta does not name; the next switch
// deletes them.
//
// Standbys: Load, then Follow the leader's appends (an etcd watch of log/ from the revision
// Load read at); on winning the election, SetFence then TakeOver, then Add/Sync.
//
// Add, Sync, Compact, stats: thread-safe. Load, Follow and TakeOver: one thread (the replica's),
// never while another thread writes.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/etcd/etcd_client.h"
#include "coordinator/etcd/etcd_store_codec.h"
#include "coordinator/state_store.h"

namespace stoker {

class EtcdStateStore : public StateStore {
 public:
  // One log transaction's records stay under this (etcd refuses requests over 1.5 MiB); a
  // larger record is written in parts.
  static constexpr size_t kMaxTxnBytes = 1u << 20;
  // Queued, unconfirmed records above this latch the store RESOURCE_EXHAUSTED: two of the
  // largest records the file journal takes (FileJournal::kMaxRecordBytes).
  static constexpr size_t kMaxQueuedBytes = 128u << 20;
  // Log keys a Range page asks for: each value is under kMaxTxnBytes, so that a page stays
  // a few MiB.
  static constexpr int64_t kLogPageKeys = 3;

  // A store over `client` (which outlives it) under `prefix` (EtcdTarget::prefix, ending in
  // '/'). `clock` times each group commit. Nothing is read until Load.
  EtcdStateStore(EtcdClient* client, std::string prefix, Clock* clock = Clock::Real());
  ~EtcdStateStore() override;
  EtcdStateStore(const EtcdStateStore&) = delete;
  EtcdStateStore& operator=(const EtcdStateStore&) = delete;

  // Every later write transaction compares `fence` (none: unfenced, for a store used alone).
  void SetFence(std::optional<etcdserverpb::Compare> fence);

  // The snapshot (its `restore` update) then the log records after its `through`, all read at
  // one revision (revision()). DATA_LOSS "etcd key <key>: ..." for a chunk, record or meta that
  // does not parse or fails its checksum; etcd's errors otherwise.
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> Load() override;
  uint64_t Add(const stoker::v1::StateUpdate& update) override;
  uint64_t last_added() const override;
  // See the failure rules above: UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED leave
  // the records queued; FAILED_PRECONDITION (deposed) and other errors latch.
  absl::Status Sync(uint64_t seq) override;
  void SyncThen(uint64_t seq, SyncDone done) override;
  absl::Status failure() const override;
  using StateStore::Compact;
  absl::Status Compact(const std::function<Snapshot()>& take_snapshot) override;
  // The log's bytes since the last snapshot (the snapshot itself not counted).
  uint64_t bytes_since_compact() const override;
  Stats stats() const override;

  // A standby's next records: those the leader appended since Load (or the last Follow), in
  // sequence order, each once; empty when none came within `timeout`. OUT_OF_RANGE when etcd
  // compacted the history the watch needed or the records are not contiguous (Load again, in a
  // new store); UNAVAILABLE when the watch broke (call again: it resumes where it was).
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> Follow(absl::Duration timeout);
  // Stops following and makes this store the writer: returns the records appended after the
  // last one Load or Follow returned (for the caller to apply), then Add continues the
  // sequence. OUT_OF_RANGE when a snapshot covers records this store never saw (Load again).
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> TakeOver();

  // The etcd revision Load read at (then the last one Follow saw).
  int64_t revision() const;
  // The last sequence stored that this store has read or written.
  uint64_t last_sequence() const;

 private:
  // Writes `records` (sequences first, first+1, ...) in transactions of up to kMaxTxnBytes;
  // returns how many were confirmed and the first error.
  absl::Status WriteLog(uint64_t first, const std::vector<std::string>& records, size_t* confirmed);
  // One fenced write transaction; FAILED_PRECONDITION when the fence compare fails.
  absl::StatusOr<etcdserverpb::TxnResponse> FencedTxn(std::vector<etcdserverpb::RequestOp> ops,
                                                      absl::string_view what);
  // The log records at `revision` (0: now) with sequences after `after`, appended to `out`;
  // returns the last sequence read.
  absl::StatusOr<uint64_t> ReadLog(int64_t revision, uint64_t after,
                                   std::vector<stoker::v1::StateUpdate>* out);
  // The records of one log key (key, value, read at `revision`) after `*last`, appended to
  // `out`; advances *last.
  absl::Status TakeLogValue(const std::string& key, const std::string& value, int64_t revision,
                            uint64_t* last, std::vector<stoker::v1::StateUpdate>* out);
  // The chunks (key, value) `meta` (read from `meta_key`) names, at `revision`.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadChunks(
      const std::string& meta_key, const EtcdSnapMeta& meta,
      const std::function<std::string(size_t)>& chunk_key, int64_t revision);
  // A record over kMaxTxnBytes: its parts, a transaction each, then its manifest in the log.
  absl::Status WriteLargeRecord(uint64_t sequence, absl::string_view framed);
  absl::Status WriteSnapshot(const Snapshot& snapshot, int64_t* revision);
  // A SyncThen caller's callback: settled once durable_ >= seq, the store latched, or a write
  // failed after it came (failures_seen != write_failures_).
  struct SyncCallback {
    uint64_t seq;
    uint64_t failures_seen;
    SyncDone done;
  };
  // The writer thread: runs the settled callbacks (without the lock), and writes everything
  // queued while callbacks wait and no Compact writes; returns once stopping_ and none waits.
  void WriterLoop();
  // One group commit of everything queued (syncing_ while etcd is called without the lock).
  void WriteQueuedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Latch(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The first `count` queued records are in etcd.
  void Confirmed(size_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a refusal for space (Stats::quota_exhausted).
  void CountRefusal(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes that leave the records queued: retry later.
  static bool Retryable(const absl::Status& status);

  EtcdClient* const client_;
  const std::string prefix_;
  Clock* const clock_;

  mutable absl::Mutex mu_;
  std::optional<etcdserverpb::Compare> fence_ ABSL_GUARDED_BY(mu_);
  // Framed records not yet confirmed: sequences durable_ + 1 .. added_.
  std::deque<std::string> queued_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t added_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t durable_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Write attempts that failed without latching; a Sync waiting on one returns its error.
  uint64_t write_failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_write_failure_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool syncing_ ABSL_GUARDED_BY(mu_) = false;  // a Sync or Compact writes outside the lock
  // Compacts wait here only while syncing_, and whoever clears syncing_ signals it.
  absl::CondVar written_;
  // Callers waiting for a write (SyncThen), in the order they came; the writer waits on work_
  // for them (and for a Compact to end).
  std::vector<SyncCallback> callbacks_ ABSL_GUARDED_BY(mu_);
  absl::CondVar work_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;  // Load or TakeOver read where the log ends

  // Follow's watch (the replica's thread only).
  std::unique_ptr<EtcdWatch> watch_;
  std::thread writer_;  // last: started once the members above exist
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_ETCD_STATE_STORE_H_
