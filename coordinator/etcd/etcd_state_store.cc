#include "coordinator/etcd/etcd_state_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/etcd/etcd_store_codec.h"

namespace stoker {
namespace {

using etcdserverpb::RequestOp;
using stoker::v1::StateUpdate;

absl::Status EtcdStoreLatched(const absl::Status& first) {
  return absl::Status(first.code(), absl::StrCat(first.message(),
                                                 " (the etcd store takes no more writes: the "
                                                 "replica must step down and load again)"));
}

}  // namespace

EtcdStateStore::EtcdStateStore(EtcdClient* client, std::string prefix, Clock* clock)
    : client_(client), prefix_(std::move(prefix)), clock_(clock) {
  writer_ = std::thread([this] { WriterLoop(); });
}

EtcdStateStore::~EtcdStateStore() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_.Signal();
  }
  writer_.join();  // after the callbacks still waiting are settled
  if (watch_ != nullptr) watch_->Cancel();
}

void EtcdStateStore::SetFence(std::optional<etcdserverpb::Compare> fence) {
  absl::MutexLock lock(&mu_);
  fence_ = std::move(fence);
}

void EtcdStateStore::Confirmed(size_t count) {
  for (size_t i = 0; i < count; ++i) {
    stats_.bytes_written_total += queued_.front().size();
    queued_bytes_ -= queued_.front().size();
    queued_.pop_front();
  }
  durable_ += count;
}

void EtcdStateStore::CountRefusal(const absl::Status& status) {
  if (!absl::IsResourceExhausted(status)) return;
  stats_.quota_exhausted = true;
  ++stats_.quota_refusals_total;
}

bool EtcdStateStore::Retryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         absl::IsResourceExhausted(status);
}

void EtcdStateStore::Latch(const absl::Status& status) {
  if (!failed_.ok()) return;
  STOKER_LOG(ERROR) << status << "; the etcd store takes no more writes";
  failed_ = EtcdStoreLatched(status);
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdStateStore::FencedTxn(std::vector<RequestOp> ops,
                                                                    absl::string_view what) {
  etcdserverpb::TxnRequest request;
  std::string fence_key;
  {
    absl::MutexLock lock(&mu_);
    if (!loaded_) {
      // Sequences would restart at 1 over what is stored.
      return absl::FailedPreconditionError(
          absl::StrCat("etcd store: ", what, " written before Load or TakeOver"));
    }
    if (fence_.has_value()) {
      *request.add_compare() = *fence_;
      fence_key = fence_->key();
    }
  }
  for (RequestOp& op : ops) *request.add_success() = std::move(op);
  ASSIGN_OR_RETURN(etcdserverpb::TxnResponse response, client_->Txn(request));
  if (!response.succeeded()) {
    return absl::FailedPreconditionError(
        absl::StrCat("etcd store: no longer the leader (the fence compare on ", fence_key,
                     " failed); ", what, " not written"));
  }
  return response;
}

uint64_t EtcdStateStore::Add(const StateUpdate& update) {
  std::string framed;
  AppendEtcdLogRecord(update, &framed);
  absl::MutexLock lock(&mu_);
  if (failed_.ok() && queued_bytes_ + framed.size() > kMaxQueuedBytes) {
    Latch(absl::ResourceExhaustedError(absl::StrCat(
        "etcd store: ", queued_bytes_, " bytes of records queued that etcd has not confirmed, ",
        "the most it holds (kMaxQueuedBytes)")));
  }
  if (failed_.ok()) {  // a failed store writes nothing more: queueing would only grow
    queued_bytes_ += framed.size();
    bytes_ += framed.size();
    queued_.push_back(std::move(framed));
  }
  return ++added_;
}

uint64_t EtcdStateStore::last_added() const {
  absl::MutexLock lock(&mu_);
  return added_;
}

absl::Status EtcdStateStore::failure() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

uint64_t EtcdStateStore::bytes_since_compact() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

StateStore::Stats EtcdStateStore::stats() const {
  absl::MutexLock lock(&mu_);
  Stats stats = stats_;
  stats.bytes_stored = bytes_;
  stats.failed = !failed_.ok();
  return stats;
}

absl::Status EtcdStateStore::WriteLog(uint64_t first, const std::vector<std::string>& records,
                                      size_t* confirmed) {
  *confirmed = 0;
  while (*confirmed < records.size()) {
    const uint64_t from = first + *confirmed;
    if (records[*confirmed].size() > kMaxTxnBytes) {
      RETURN_IF_ERROR(WriteLargeRecord(from, records[*confirmed]));
      ++*confirmed;
      continue;
    }
    std::string value = records[*confirmed];
    size_t count = 1;
    while (*confirmed + count < records.size() &&
           value.size() + records[*confirmed + count].size() <= kMaxTxnBytes) {
      value += records[*confirmed + count++];
    }
    std::vector<RequestOp> ops;
    ops.push_back(EtcdPutOp(EtcdLogKey(prefix_, from), std::move(value)));
    RETURN_IF_ERROR(
        FencedTxn(std::move(ops), absl::StrCat("records ", from, "..", from + count - 1)).status());
    *confirmed += count;
  }
  return absl::OkStatus();
}

absl::Status EtcdStateStore::WriteLargeRecord(uint64_t sequence, absl::string_view framed) {
  // The parts first, then the manifest in the log: a record is there once its manifest is.
  EtcdSnapMeta manifest{sequence, sequence};
  std::vector<std::string> parts = EncodeEtcdChunks(framed, &manifest);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<RequestOp> ops;
    ops.push_back(EtcdPutOp(EtcdLargePartKey(prefix_, sequence, i), std::move(parts[i])));
    RETURN_IF_ERROR(FencedTxn(std::move(ops), absl::StrCat("record ", sequence, "'s part ", i,
                                                           " of ", manifest.chunks))
                        .status());
  }
  std::vector<RequestOp> ops;
  ops.push_back(EtcdPutOp(EtcdLargeRecordKey(prefix_, sequence), EncodeEtcdSnapMeta(manifest)));
  return FencedTxn(std::move(ops), absl::StrCat("record ", sequence)).status();
}

absl::Status EtcdStateStore::Sync(uint64_t seq) {
  absl::Notification settled;
  absl::Status result;
  SyncThen(seq, [&](absl::Status status) {
    result = std::move(status);
    settled.Notify();
  });
  settled.WaitForNotification();
  return result;
}

void EtcdStateStore::SyncThen(uint64_t seq, SyncDone done) {
  absl::MutexLock lock(&mu_);
  callbacks_.push_back(SyncCallback{seq, write_failures_, std::move(done)});
  work_.Signal();
}

void EtcdStateStore::WriterLoop() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    std::vector<std::pair<SyncDone, absl::Status>> settled;
    auto waiting = callbacks_.begin();
    for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
      if (durable_ >= it->seq || it->seq > added_) {  // durable, or never added: no wait
        settled.emplace_back(std::move(it->done), absl::OkStatus());
      } else if (!failed_.ok()) {
        settled.emplace_back(std::move(it->done), failed_);
      } else if (it->failures_seen != write_failures_) {
        settled.emplace_back(std::move(it->done), last_write_failure_);
      } else {
        if (waiting != it) *waiting = std::move(*it);
        ++waiting;
      }
    }
    callbacks_.erase(waiting, callbacks_.end());
    if (!settled.empty()) {
      // The replies go out before the next write: they are what the callers wait for.
      mu_.Unlock();
      for (auto& [done, status] : settled) done(std::move(status));
      mu_.Lock();
      continue;
    }
    if (callbacks_.empty() && stopping_) return;
    if (callbacks_.empty() || syncing_) {
      work_.Wait(&mu_);
      continue;
    }
    WriteQueuedLocked();
  }
}

void EtcdStateStore::WriteQueuedLocked() {
  // Everything queued so far, for every waiter. The records stay queued until etcd confirms
  // them, so that a failed write leaves them for the next one.
  syncing_ = true;
  const uint64_t first = durable_ + 1;
  const std::vector<std::string> records(queued_.begin(), queued_.end());
  size_t confirmed = 0;
  mu_.Unlock();
  const absl::Time start = clock_->Now();
  const absl::Status status = WriteLog(first, records, &confirmed);
  const double seconds = absl::ToDoubleSeconds(clock_->Now() - start);
  mu_.Lock();
  syncing_ = false;
  written_.SignalAll();  // a Compact waiting for this write
  Confirmed(confirmed);
  if (status.ok()) {
    stats_.sync_seconds.Observe(seconds);
    stats_.quota_exhausted = false;
    return;
  }
  CountRefusal(status);
  if (!Retryable(status)) {
    Latch(status);
    return;
  }
  ++write_failures_;
  last_write_failure_ = absl::Status(
      status.code(), absl::StrCat(status.message(), " (records ", durable_ + 1, "..", added_,
                                  " stay queued: the next Sync writes them again)"));
  STOKER_LOG(WARNING) << last_write_failure_;
}

absl::Status EtcdStateStore::WriteSnapshot(const Snapshot& snapshot, int64_t* revision) {
  // The generation after the one etcd names now (not one remembered: a switch whose answer was
  // lost may have happened), so that the live generation's chunks are never overwritten.
  etcdserverpb::RangeRequest meta_request;
  meta_request.set_key(EtcdSnapMetaKey(prefix_));
  ASSIGN_OR_RETURN(const etcdserverpb::RangeResponse current, client_->Range(meta_request));
  EtcdSnapMeta meta;
  if (current.kvs_size() > 0) {
    ASSIGN_OR_RETURN(meta, DecodeEtcdSnapMeta(meta_request.key(), current.kvs(0).value()));
  }
  meta.generation += 1;
  meta.through = snapshot.through;
  std::vector<std::string> chunks = EncodeEtcdSnapshot(snapshot.update, &meta);
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::vector<RequestOp> ops;
    ops.push_back(EtcdPutOp(EtcdSnapChunkKey(prefix_, meta.generation, i), std::move(chunks[i])));
    RETURN_IF_ERROR(
        FencedTxn(std::move(ops), absl::StrCat("snapshot chunk ", i, " of ", meta.chunks))
            .status());
  }
  const std::string generation = EtcdSnapGenerationPrefix(prefix_, meta.generation);
  std::vector<RequestOp> ops;
  ops.push_back(EtcdPutOp(meta_request.key(), EncodeEtcdSnapMeta(meta)));
  ops.push_back(EtcdDeleteRangeOp(EtcdLogPrefix(prefix_), EtcdLogKey(prefix_, meta.through + 1)));
  ops.push_back(
      EtcdDeleteRangeOp(EtcdLargePrefix(prefix_), EtcdLargePartsPrefix(prefix_, meta.through + 1)));
  // Earlier generations, and chunks past this one's count left by a switch that never happened.
  ops.push_back(EtcdDeleteRangeOp(EtcdSnapPrefix(prefix_), generation));
  ops.push_back(EtcdDeleteRangeOp(EtcdSnapChunkKey(prefix_, meta.generation, meta.chunks),
                                  EtcdPrefixEnd(generation)));
  ASSIGN_OR_RETURN(const etcdserverpb::TxnResponse switched,
                   FencedTxn(std::move(ops), "the snapshot switch"));
  *revision = switched.header().revision();
  return absl::OkStatus();
}

absl::Status EtcdStateStore::Compact(const std::function<Snapshot()>& take_snapshot) {
  {
    absl::MutexLock lock(&mu_);
    while (syncing_) written_.Wait(&mu_);
    RETURN_IF_ERROR(failed_);
    syncing_ = true;  // no Sync writes while the snapshot is written
  }
  // Without the lock: the caller's lock (under which it Adds) may be taken here.
  const Snapshot snapshot = take_snapshot();
  int64_t revision = 0;
  absl::Status status;
  uint64_t first = 0;
  std::vector<std::string> covered;
  {
    absl::MutexLock lock(&mu_);
    if (snapshot.through < durable_ || snapshot.through > added_) {
      status = absl::InvalidArgumentError(
          absl::StrCat("etcd store: a snapshot through ", snapshot.through, " outside ", durable_,
                       "..", added_, " (stored through, added through)"));
    } else {
      first = durable_ + 1;
      covered.assign(queued_.begin(), queued_.begin() + (snapshot.through - durable_));
    }
  }
  // The queued records the snapshot covers go to the log first, so that a standby following
  // the log sees them (the switch deletes them a moment later) instead of a gap to reload at.
  size_t confirmed = 0;
  if (status.ok()) status = WriteLog(first, covered, &confirmed);
  if (status.ok()) status = WriteSnapshot(snapshot, &revision);
  if (status.ok()) {
    // History before the switch is garbage now; a failure here only delays its removal.
    etcdserverpb::CompactionRequest compaction;
    compaction.set_revision(revision);
    const absl::Status compacted = client_->Compact(compaction).status();
    if (!compacted.ok() && !absl::IsOutOfRange(compacted)) {
      STOKER_LOG(WARNING) << "etcd store: compacting etcd's history at revision " << revision
                          << ": " << compacted;
    }
  }
  absl::MutexLock lock(&mu_);
  syncing_ = false;
  written_.SignalAll();
  work_.Signal();  // the writer, which waited for this
  Confirmed(confirmed);
  if (!status.ok()) {
    CountRefusal(status);
    // An unconfirmed switch leaves the queue whole: records it covers are written again and
    // skipped by readers (their sequences are at or below the snapshot's).
    if (!Retryable(status) && !absl::IsInvalidArgument(status)) Latch(status);
    return status;
  }
  stats_.quota_exhausted = false;
  // The records the snapshot covers were confirmed above; the later ones stay for the next Sync.
  // Log bytes only: counting the snapshot would compact again at every Sync once the state
  // alone passes the coordinator's threshold, each compaction rewriting every chunk.
  bytes_ = queued_bytes_;
  return absl::OkStatus();
}

}  // namespace stoker
