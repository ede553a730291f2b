#include "plan/shard_window_order.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/counter_rng.h"
#include "plan/keyed_permutation.h"

namespace stoker {
namespace {

absl::Status CheckShardStarts(absl::Span<const uint64_t> starts) {
  if (starts.size() < 2 || starts.front() != 0 || starts.back() == 0) {
    return absl::InvalidArgumentError(
        "spec.shuffle: SHUFFLE_MODE_SHARD_WINDOW needs a sharded dataset (dataset.shards)");
  }
  if (!std::is_sorted(starts.begin(), starts.end())) {
    return absl::InvalidArgumentError("spec.shuffle: shard boundaries are not non-decreasing");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShardWindowOrder> ShardWindowOrder::Create(absl::Span<const uint64_t> shard_starts,
                                                          uint32_t window_shards, uint64_t key,
                                                          uint64_t slot_key) {
  if (window_shards == 0 || window_shards > kMaxWindowShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.shuffle_window_shards: must be in [1, ", kMaxWindowShards,
                     "] with SHUFFLE_MODE_SHARD_WINDOW, got ", window_shards));
  }
  if (absl::Status status = CheckShardStarts(shard_starts); !status.ok()) return status;
  const size_t shards = shard_starts.size() - 1;
  const KeyedPermutation slots(shards, slot_key);
  ShardWindowOrder order(window_shards, key);
  order.slot_start_.reserve(shards + 1);
  order.slot_first_sample_.reserve(shards);
  uint64_t position = 0;
  for (size_t t = 0; t < shards; ++t) {
    const uint64_t s = slots(t);
    order.slot_start_.push_back(position);
    order.slot_first_sample_.push_back(shard_starts[s]);
    position += shard_starts[s + 1] - shard_starts[s];
  }
  order.slot_start_.push_back(position);
  return order;
}

size_t ShardWindowOrder::SlotOf(uint64_t position, size_t first, size_t last) const {
  // The last slot starting at or before `position`: never an empty one, since an empty slot
  // starts where the next one does.
  const auto it =
      std::upper_bound(slot_start_.begin() + first, slot_start_.begin() + last, position);
  return static_cast<size_t>(it - slot_start_.begin()) - 1;
}

uint64_t ShardWindowOrder::WindowOf(uint64_t position) const {
  return SlotOf(position, 0, slot_start_.size() - 1) / window_shards_;
}

uint64_t ShardWindowOrder::At(uint64_t position) const {
  const size_t shards = slot_start_.size() - 1;
  const uint64_t w = WindowOf(position);
  const size_t first_slot = w * window_shards_;
  const size_t end_slot = std::min<size_t>(first_slot + window_shards_, shards);
  const uint64_t begin = slot_start_[first_slot];
  const uint64_t window_size = slot_start_[end_slot] - begin;
  const uint64_t offset =
      begin + KeyedPermutation(window_size, KeyOf(key_, w, 2))(position - begin);
  const size_t slot = SlotOf(offset, first_slot, end_slot);
  return slot_first_sample_[slot] + (offset - slot_start_[slot]);
}

}  // namespace stoker
