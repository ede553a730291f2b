#include "worker/decoded_cache_probe.h"

#include <algorithm>

namespace stoker {

DecodedCacheProbe::Turn DecodedCacheProbe::Next() {
  const int state = state_.load(std::memory_order_acquire);
  if (state != kProbing) {
    const bool reconsider =
        decided_turns_.fetch_add(1, std::memory_order_relaxed) % kReconsiderEvery ==
        kReconsiderEvery - 1;
    return Turn{state == kUse ? Route::kCached : Route::kUncached, false, reconsider};
  }
  const uint64_t turn = turns_.fetch_add(1, std::memory_order_relaxed);
  return Turn{turn % 2 == 0 ? Route::kUncached : Route::kCached, true};
}

std::optional<DecodedCacheChoice> DecodedCacheProbe::RecordUncached(double seconds) {
  absl::MutexLock lock(&mu_);
  ++uncached_;
  uncached_seconds_ += seconds;
  return MaybeDecideLocked();
}

std::optional<DecodedCacheChoice> DecodedCacheProbe::RecordCached(const CachedSample& sample) {
  absl::MutexLock lock(&mu_);
  if (sample.hit) {
    ++hits_;
    hit_seconds_ += sample.seconds;
  } else {
    ++misses_;
    miss_seconds_ += sample.seconds;
    miss_prefix_seconds_ += sample.prefix_seconds;
  }
  prefix_seconds_ += sample.prefix_seconds;
  entry_bytes_ += sample.entry_bytes;
  entries_fit_ = sample.entries_fit;
  if (!choice_.has_value()) {  // after it, Reconsider follows the members
    group_members_ = std::max<uint32_t>(1, sample.group_members);
    aligned_members_ = sample.aligned_members;
    aligned_window_samples_ = sample.aligned_window_samples;
  }
  return MaybeDecideLocked();
}

std::optional<DecodedCacheChoice> DecodedCacheProbe::MaybeDecideLocked() {
  const uint32_t cached = misses_ + hits_;
  if (choice_.has_value() || uncached_ < kSamplesPerRoute || cached < kSamplesPerRoute) {
    return std::nullopt;
  }
  DecodedCacheCosts& costs = costs_.emplace();
  costs.uncached_seconds = uncached_seconds_ / uncached_;
  costs.prefix_seconds = prefix_seconds_ / cached;
  costs.entry_bytes = entry_bytes_ / cached;
  // Without hits (another job's entries, or this one's from earlier turns) a hit is a miss
  // without its prefix; without misses (every entry was there) a miss is a hit plus the prefix
  // time its entry recorded.
  costs.hit_seconds = hits_ > 0 ? hit_seconds_ / hits_
                                : std::max(0.0, (miss_seconds_ - miss_prefix_seconds_) / misses_);
  costs.miss_seconds =
      misses_ > 0 ? miss_seconds_ / misses_ : costs.hit_seconds + costs.prefix_seconds;
  ChooseLocked();
  return choice_;
}

void DecodedCacheProbe::ChooseLocked() {
  DecodedCacheOutlook outlook;
  outlook.samples = samples_;
  outlook.entries_fit = entries_fit_;
  // Each decode serves every sharing job's epochs.
  outlook.passes = passes_ * group_members_;
  // In each epoch the other aligned jobs follow through the blocks this one reads.
  outlook.aligned_passes = passes_ * (std::max<uint32_t>(aligned_members_, 1) - 1);
  outlook.aligned_window_samples = aligned_window_samples_;
  choice_ = ChooseDecodedCache(*costs_, outlook);
  state_.store(choice_->use ? kUse : kLeaveOff, std::memory_order_release);
}

std::optional<DecodedCacheChoice> DecodedCacheProbe::Reconsider(uint32_t group_members,
                                                                uint32_t aligned_members) {
  absl::MutexLock lock(&mu_);
  group_members = std::max<uint32_t>(1, group_members);
  if (!costs_.has_value() ||
      (group_members == group_members_ && aligned_members == aligned_members_)) {
    return std::nullopt;
  }
  group_members_ = group_members;
  aligned_members_ = aligned_members;
  const bool used = choice_->use;
  ChooseLocked();
  if (choice_->use == used) return std::nullopt;
  return choice_;
}

std::optional<DecodedCacheChoice> DecodedCacheProbe::choice() const {
  absl::MutexLock lock(&mu_);
  return choice_;
}

}  // namespace stoker
