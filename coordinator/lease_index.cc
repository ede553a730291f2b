#include "coordinator/lease_index.h"

namespace stoker {

void LeaseIndex::Add(const Key& key, int64_t expires_unix_ms, uint64_t holder) {
  by_expiry_.emplace(expires_unix_ms, key);
  if (holder != kNoHolder) by_holder_[holder].insert(key);
}

void LeaseIndex::Remove(const Key& key, int64_t expires_unix_ms, uint64_t holder) {
  by_expiry_.erase({expires_unix_ms, key});
  Release(key, holder);
}

void LeaseIndex::Release(const Key& key, uint64_t holder) {
  auto held = by_holder_.find(holder);
  if (held == by_holder_.end()) return;
  held->second.erase(key);
  if (held->second.empty()) by_holder_.erase(held);
}

std::optional<int64_t> LeaseIndex::EarliestExpiry() const {
  if (by_expiry_.empty()) return std::nullopt;
  return std::get<0>(*by_expiry_.begin());
}

std::optional<LeaseIndex::Key> LeaseIndex::FirstExpiredBy(int64_t now_unix_ms) const {
  if (by_expiry_.empty() || std::get<0>(*by_expiry_.begin()) > now_unix_ms) return std::nullopt;
  return std::get<1>(*by_expiry_.begin());
}

std::vector<LeaseIndex::Key> LeaseIndex::HeldBy(uint64_t holder) const {
  auto held = by_holder_.find(holder);
  if (held == by_holder_.end() || holder == kNoHolder) return {};
  return {held->second.begin(), held->second.end()};
}

}  // namespace stoker
