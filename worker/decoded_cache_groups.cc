#include "worker/decoded_cache_groups.h"

namespace stoker {

std::shared_ptr<const void> DecodedCacheGroups::Join(const Key& key) {
  {
    absl::MutexLock lock(&counts_->mu);
    ++counts_->members[key];
  }
  // The handle leaves the group when destroyed, through its own reference to the counts.
  std::shared_ptr<Counts> counts = counts_;
  return std::shared_ptr<const void>(nullptr, [counts, key](const void*) {
    absl::MutexLock lock(&counts->mu);
    const auto it = counts->members.find(key);
    if (it != counts->members.end() && --it->second == 0) counts->members.erase(it);
  });
}

uint32_t DecodedCacheGroups::Members(const Key& key) const {
  absl::MutexLock lock(&counts_->mu);
  const auto it = counts_->members.find(key);
  return it == counts_->members.end() ? 0 : it->second;
}

}  // namespace stoker
