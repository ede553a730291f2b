#include "data/open_shards.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "data/storage_backend.h"
#include "data/tar_reader.h"

namespace stoker {
namespace {

absl::StatusOr<std::unique_ptr<OpenShard>> OpenAndIndex(const Storage& storage,
                                                        const std::string& location,
                                                        uint64_t expected_records,
                                                        RemoteReads reads,
                                                        const std::vector<std::string>& fields) {
  auto shard = std::make_unique<OpenShard>();
  shard->tar = IsTarShard(location);
  ASSIGN_OR_RETURN(shard->file, storage.Open(location, reads));
  ASSIGN_OR_RETURN(shard->index, shard->tar ? LoadTarShardIndex(*shard->file, nullptr, fields)
                                            : LoadStokerShardIndex(*shard->file));
  const uint64_t found = shard->index.samples.size();
  if (!shard->index.damage.empty()) {
    STOKER_LOG(WARNING) << location << ": " << shard->index.damage << "; "
                        << (found < expected_records ? expected_records - found : 0)
                        << " samples will be skipped";
  } else if (found != expected_records) {
    STOKER_LOG(WARNING) << location << " holds " << found << " samples, the manifest "
                        << expected_records;
  }
  return shard;
}

}  // namespace

absl::Status OpenShardLimits::Validate() const {
  if (max_open == 0) return absl::InvalidArgumentError("max_open_shards: must be > 0");
  if (index_bytes == 0) return absl::InvalidArgumentError("shard_index_bytes: must be > 0");
  return absl::OkStatus();
}

uint64_t OpenShard::index_bytes() const {
  return index.samples.capacity() * sizeof(SampleLocation) +
         index.fields.capacity() * sizeof(FieldLocation) + index.damage.capacity();
}

absl::StatusOr<std::shared_ptr<const OpenShard>> OpenShardPool::Get(
    const Storage& storage, const std::string& location, uint64_t expected_records,
    RemoteReads reads, const std::vector<std::string>& field_extensions) {
  // The location, then the extensions one per line (they hold no newline: data/sample_fields.h).
  const std::string key = field_extensions.empty()
                              ? location
                              : absl::StrCat(location, "\n", absl::StrJoin(field_extensions, "\n"));
  const std::shared_ptr<Entry> entry = Touch(key);
  std::shared_ptr<const OpenShard> shard;
  bool loaded = false;
  {
    absl::MutexLock lock(&entry->mu);
    if (entry->shard == nullptr) {
      absl::StatusOr<std::unique_ptr<OpenShard>> opened =
          OpenAndIndex(storage, location, expected_records, reads, field_extensions);
      if (!opened.ok()) {
        Forget(key, entry.get());
        return opened.status();
      }
      entry->shard = *std::move(opened);
      loaded = true;
    }
    shard = entry->shard;
  }
  if (loaded) Admit(key, entry.get(), shard->index_bytes());
  return shard;
}

std::shared_ptr<OpenShardPool::Entry> OpenShardPool::Touch(const std::string& location) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = entries_.try_emplace(location);
  if (inserted) {
    it->second = std::make_shared<Entry>();
    lru_.push_front(location);
    it->second->lru = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, it->second->lru);
  }
  return it->second;
}

void OpenShardPool::Admit(const std::string& location, const Entry* entry, uint64_t index_bytes) {
  absl::MutexLock lock(&mu_);
  const auto found = entries_.find(location);
  // Evicted while it loaded: its reader holds it; the pool does not count it.
  if (found == entries_.end() || found->second.get() != entry) return;
  found->second->index_bytes = index_bytes;
  index_bytes_ += index_bytes;
  // Least recently used first, never the shard just loaded.
  auto it = lru_.end();
  while ((entries_.size() > limits_.max_open || index_bytes_ > limits_.index_bytes) &&
         it != lru_.begin()) {
    --it;
    const auto victim = entries_.find(*it);
    if (victim->second.get() == entry) continue;
    index_bytes_ -= victim->second->index_bytes;
    entries_.erase(victim);
    it = lru_.erase(it);
  }
}

void OpenShardPool::Forget(const std::string& location, const Entry* entry) {
  absl::MutexLock lock(&mu_);
  const auto found = entries_.find(location);
  if (found == entries_.end() || found->second.get() != entry) return;
  lru_.erase(found->second->lru);
  entries_.erase(found);
}

uint64_t OpenShardPool::held() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

uint64_t OpenShardPool::held_index_bytes() const {
  absl::MutexLock lock(&mu_);
  return index_bytes_;
}

}  // namespace stoker
