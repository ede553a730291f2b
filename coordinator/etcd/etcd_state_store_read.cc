// EtcdStateStore's reads (etcd_state_store.h): Load, and a standby's Follow and TakeOver.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/etcd/etcd_state_store.h"
#include "coordinator/etcd/etcd_store_codec.h"

namespace stoker {

using stoker::v1::StateUpdate;

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
    for (const auto& kv : page.kvs()) {
      RETURN_IF_ERROR(TakeLogValue(kv.key(), kv.value(), request.revision(), &last, out));
    }
    if (!page.more() || page.kvs_size() == 0) return last;
    // Keys come in key order, which is sequence order (20 digits): the next page starts after.
    request.set_key(page.kvs(page.kvs_size() - 1).key() + '\0');
    if (revision == 0) request.set_revision(page.header().revision());
  }
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> EtcdStateStore::ReadChunks(
    const std::string& meta_key, const EtcdSnapMeta& meta,
    const std::function<std::string(size_t)>& chunk_key, int64_t revision) {
  std::vector<std::pair<std::string, std::string>> chunks;
  for (uint32_t i = 0; i < meta.chunks; ++i) {
    etcdserverpb::RangeRequest request;
    request.set_key(chunk_key(i));
    request.set_revision(revision);
    ASSIGN_OR_RETURN(const etcdserverpb::RangeResponse chunk, client_->Range(request));
    if (chunk.kvs_size() == 0) {
      return absl::DataLossError(absl::StrCat("etcd key ", request.key(), ": missing (", meta_key,
                                              " names ", meta.chunks, " chunks)"));
    }
    chunks.emplace_back(request.key(), chunk.kvs(0).value());
  }
  return chunks;
}

absl::Status EtcdStateStore::TakeLogValue(const std::string& key, const std::string& value,
                                          int64_t revision, uint64_t* last,
                                          std::vector<StateUpdate>* out) {
  bool large = false;
  ASSIGN_OR_RETURN(const uint64_t first, ParseEtcdLogKey(prefix_, key, &large));
  std::vector<StateUpdate> records;
  if (large && first <= *last) return absl::OkStatus();  // seen: its parts are not read again
  if (large) {
    ASSIGN_OR_RETURN(const EtcdSnapMeta manifest, DecodeEtcdSnapMeta(key, value));
    ASSIGN_OR_RETURN(const auto parts,
                     ReadChunks(
                         key, manifest,
                         [&](size_t i) { return EtcdLargePartKey(prefix_, first, i); }, revision));
    ASSIGN_OR_RETURN(const std::string framed, DecodeEtcdChunks(key, manifest, parts));
    RETURN_IF_ERROR(DecodeEtcdLogValue(key, framed, &records));
    if (records.size() != 1) {
      return absl::DataLossError(absl::StrCat("etcd key ", key, ": not one record"));
    }
  } else {
    RETURN_IF_ERROR(DecodeEtcdLogValue(key, value, &records));
  }
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
    ASSIGN_OR_RETURN(
        const auto chunks,
        ReadChunks(
            meta_request.key(), meta,
            [&](size_t i) { return EtcdSnapChunkKey(prefix_, meta.generation, i); }, revision));
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
  for (const StateUpdate& update : updates) {
    if (!update.has_restore()) bytes_ += update.ByteSizeLong();  // log bytes, as after Compact
  }
  return updates;
}

int64_t EtcdStateStore::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

uint64_t EtcdStateStore::last_sequence() const {
  absl::MutexLock lock(&mu_);
  return durable_;
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
    // A standby that lags gets many revisions' events at once: in fragments of about etcd's
    // request limit, never one response over the client's receive limit. Each revision puts
    // one log key, so a fragment never splits what a revision wrote.
    request.set_fragment(true);
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
    const absl::Status taken = TakeLogValue(event.kv().key(), event.kv().value(),
                                            event.kv().mod_revision(), &last, &updates);
    if (!taken.ok()) {
      watch_.reset();  // the next Follow reads this response's events again
      return taken;
    }
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
