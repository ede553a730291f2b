#include "coordinator/etcd/etcd_state_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
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
    : client_(client), prefix_(std::move(prefix)), clock_(clock) {}

EtcdStateStore::~EtcdStateStore() {
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

absl::StatusOr<uint64_t> EtcdStateStore::ReadLog(int64_t revision, uint64_t after,
                                                 std::vector<StateUpdate>* out) {
  const std::string end = EtcdPrefixEnd(EtcdLogPrefix(prefix_));
  etcdserverpb::RangeRequest request;
  request.set_key(EtcdLogPrefix(prefix_));
  request.set_range_end(end);
  request.set_revision(revision);
  request.set_limit(kLogPageKeys);
  uint64_t last = after;
  for (;;) {
    ASSIGN_OR_RETURN(etcdserverpb::RangeResponse page, client_->Range(request));
    for (const auto& kv : page.kvs())
      RETURN_IF_ERROR(TakeLogValue(kv.key(), kv.value(), &last, out));
    if (!page.more() || page.kvs_size() == 0) return last;
    // Keys come in key order, which is sequence order (20 digits): the next page starts after.
    request.set_key(page.kvs(page.kvs_size() - 1).key() + '\0');
    if (revision == 0) request.set_revision(page.header().revision());
  }
}

absl::Status EtcdStateStore::TakeLogValue(const std::string& key, const std::string& value,
                                          uint64_t* last, std::vector<StateUpdate>* out) {
  ASSIGN_OR_RETURN(const uint64_t first, ParseEtcdLogKey(prefix_, key));
  std::vector<StateUpdate> records;
  RETURN_IF_ERROR(DecodeEtcdLogValue(key, value, &records));
  if (first > *last + 1) {
    return absl::OutOfRangeError(absl::StrCat("etcd store: ", key, " starts at sequence ", first,
                                              " but the last record read is ", *last,
                                              ": records are missing (load again)"));
  }
  // A key written again after an unconfirmed write repeats sequences already read: skip them.
  for (uint64_t i = *last + 1 - first; i < records.size(); ++i) {
    out->push_back(std::move(records[i]));
  }
  *last = std::max(*last, first + records.size() - 1);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StateUpdate>> EtcdStateStore::Load() {
  etcdserverpb::RangeRequest meta_request;
  meta_request.set_key(EtcdSnapMetaKey(prefix_));
  ASSIGN_OR_RETURN(const etcdserverpb::RangeResponse meta_response, client_->Range(meta_request));
  const int64_t revision = meta_response.header().revision();
  std::vector<StateUpdate> updates;
  uint64_t through = 0;
  if (meta_response.kvs_size() > 0) {
    ASSIGN_OR_RETURN(const EtcdSnapMeta meta,
                     DecodeEtcdSnapMeta(meta_request.key(), meta_response.kvs(0).value()));
    std::vector<std::pair<std::string, std::string>> chunks;
    for (uint32_t i = 0; i < meta.chunks; ++i) {
      etcdserverpb::RangeRequest chunk_request;
      chunk_request.set_key(EtcdSnapChunkKey(prefix_, meta.generation, i));
      chunk_request.set_revision(revision);
      ASSIGN_OR_RETURN(const etcdserverpb::RangeResponse chunk, client_->Range(chunk_request));
      if (chunk.kvs_size() == 0) {
        return absl::DataLossError(absl::StrCat("etcd key ", chunk_request.key(), ": missing (",
                                                meta_request.key(), " names ", meta.chunks,
                                                " chunks)"));
      }
      chunks.emplace_back(chunk_request.key(), chunk.kvs(0).value());
    }
    ASSIGN_OR_RETURN(StateUpdate restore, DecodeEtcdSnapshot(meta_request.key(), meta, chunks));
    updates.push_back(std::move(restore));
    through = meta.through;
  }
  ASSIGN_OR_RETURN(const uint64_t last, ReadLog(revision, through, &updates));
  absl::MutexLock lock(&mu_);
  added_ = durable_ = last;
  loaded_ = true;
  revision_ = revision;
  bytes_ = 0;
  for (const StateUpdate& update : updates) bytes_ += update.ByteSizeLong();
  return updates;
}

uint64_t EtcdStateStore::Add(const StateUpdate& update) {
  std::string framed;
  AppendEtcdLogRecord(update, &framed);
  absl::MutexLock lock(&mu_);
  if (failed_.ok() && queued_bytes_ + framed.size() > kMaxQueuedBytes) {
    Latch(absl::ResourceExhaustedError(absl::StrCat(
        "etcd store: ", queued_bytes_, " bytes of records queued that etcd has not confirmed")));
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

int64_t EtcdStateStore::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

uint64_t EtcdStateStore::last_sequence() const {
  absl::MutexLock lock(&mu_);
  return durable_;
}

absl::Status EtcdStateStore::WriteLog(uint64_t first, const std::vector<std::string>& records,
                                      size_t* confirmed) {
  *confirmed = 0;
  while (*confirmed < records.size()) {
    std::string value = records[*confirmed];
    size_t count = 1;
    while (*confirmed + count < records.size() &&
           value.size() + records[*confirmed + count].size() <= kMaxTxnBytes) {
      value += records[*confirmed + count++];
    }
    const uint64_t from = first + *confirmed;
    std::vector<RequestOp> ops;
    ops.push_back(EtcdPutOp(EtcdLogKey(prefix_, from), std::move(value)));
    RETURN_IF_ERROR(
        FencedTxn(std::move(ops), absl::StrCat("records ", from, "..", from + count - 1)).status());
    *confirmed += count;
  }
  return absl::OkStatus();
}

bool EtcdStateStore::SyncDoneOrFree(SyncWait* wait) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  EtcdStateStore* self = wait->self;
  return !self->failed_.ok() || self->durable_ >= wait->seq ||
         self->write_failures_ != wait->failures_seen || !self->syncing_;
}

absl::Status EtcdStateStore::Sync(uint64_t seq) {
  absl::MutexLock lock(&mu_);
  SyncWait wait{this, seq, write_failures_};
  mu_.Await(absl::Condition(&SyncDoneOrFree, &wait));
  if (!failed_.ok() || durable_ >= seq) return durable_ >= seq ? absl::OkStatus() : failed_;
  if (write_failures_ != wait.failures_seen) return last_write_failure_;
  // Leader: write everything queued so far, for every waiter. The records stay queued until
  // etcd confirms them, so that a failed write leaves them for the next Sync.
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
  Confirmed(confirmed);
  if (status.ok()) {
    stats_.sync_seconds.Observe(seconds);
    stats_.quota_exhausted = false;
    return durable_ >= seq ? absl::OkStatus() : status;
  }
  CountRefusal(status);
  if (!Retryable(status)) {
    Latch(status);
    return failed_;
  }
  ++write_failures_;
  last_write_failure_ = absl::Status(
      status.code(), absl::StrCat(status.message(), " (records ", durable_ + 1, "..", added_,
                                  " stay queued: the next Sync writes them again)"));
  STOKER_LOG(WARNING) << last_write_failure_;
  return durable_ >= seq ? absl::OkStatus() : last_write_failure_;
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
    mu_.Await(absl::Condition(
        +[](bool* syncing) { return !*syncing; }, &syncing_));
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
  Confirmed(confirmed);
  if (!status.ok()) {
    CountRefusal(status);
    // An unconfirmed switch leaves the queue whole: records it covers are written again and
    // skipped by readers (their sequences are at or below the snapshot's).
    if (!Retryable(status) && !absl::IsInvalidArgument(status)) Latch(status);
    return status;
  }
  stats_.quota_exhausted = false;
  // The queued records the snapshot covers are dropped; the later ones stay for the next Sync.
  while (durable_ < snapshot.through) {
    queued_bytes_ -= queued_.front().size();
    queued_.pop_front();
    ++durable_;
  }
  bytes_ = snapshot.update.ByteSizeLong() + queued_bytes_;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StateUpdate>> EtcdStateStore::Follow(absl::Duration timeout) {
  uint64_t last = 0;
  int64_t revision = 0;
  {
    absl::MutexLock lock(&mu_);
    last = durable_;
    revision = revision_;
  }
  if (watch_ == nullptr) {
    etcdserverpb::WatchCreateRequest request;
    request.set_key(EtcdLogPrefix(prefix_));
    request.set_range_end(EtcdPrefixEnd(request.key()));
    request.set_start_revision(revision + 1);
    ASSIGN_OR_RETURN(watch_, client_->Watch(request));
  }
  absl::StatusOr<etcdserverpb::WatchResponse> response = watch_->Next(timeout);
  if (absl::IsDeadlineExceeded(response.status())) return std::vector<StateUpdate>();
  if (!response.ok()) {
    watch_.reset();  // the next Follow watches again from the last revision seen
    if (!absl::IsOutOfRange(response.status())) return response.status();
    return absl::OutOfRangeError(
        absl::StrCat("etcd store: the history of ", EtcdLogPrefix(prefix_), " after revision ",
                     revision, " was compacted (load again): ", response.status().message()));
  }
  if (response->canceled()) {
    watch_.reset();
    return absl::UnavailableError(absl::StrCat("etcd store: the watch of ", EtcdLogPrefix(prefix_),
                                               " was canceled (", response->cancel_reason(), ")"));
  }
  std::vector<StateUpdate> updates;
  for (const mvccpb::Event& event : response->events()) {
    revision = std::max(revision, event.kv().mod_revision());
    if (event.type() != mvccpb::Event::PUT) continue;  // a snapshot's switch deleting keys
    RETURN_IF_ERROR(TakeLogValue(event.kv().key(), event.kv().value(), &last, &updates));
  }
  absl::MutexLock lock(&mu_);
  added_ = durable_ = last;
  revision_ = revision;
  return updates;
}

absl::StatusOr<std::vector<StateUpdate>> EtcdStateStore::TakeOver() {
  if (watch_ != nullptr) {
    watch_->Cancel();
    watch_.reset();
  }
  uint64_t last = last_sequence();
  etcdserverpb::RangeRequest meta_request;
  meta_request.set_key(EtcdSnapMetaKey(prefix_));
  ASSIGN_OR_RETURN(const etcdserverpb::RangeResponse current, client_->Range(meta_request));
  if (current.kvs_size() > 0) {
    ASSIGN_OR_RETURN(const EtcdSnapMeta meta,
                     DecodeEtcdSnapMeta(meta_request.key(), current.kvs(0).value()));
    if (meta.through > last) {
      return absl::OutOfRangeError(absl::StrCat("etcd store: a snapshot through ", meta.through,
                                                " covers records after ", last,
                                                ", the last this store read (load again)"));
    }
  }
  std::vector<StateUpdate> updates;
  ASSIGN_OR_RETURN(last, ReadLog(current.header().revision(), last, &updates));
  absl::MutexLock lock(&mu_);
  added_ = durable_ = last;
  loaded_ = true;
  revision_ = current.header().revision();
  return updates;
}

}  // namespace stoker
