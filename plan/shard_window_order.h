#ifndef STOKER_PLAN_SHARD_WINDOW_ORDER_H_
#define STOKER_PLAN_SHARD_WINDOW_ORDER_H_

// The SHUFFLE_MODE_SHARD_WINDOW order (plan/epoch_plan.h), shard-aware in the spirit of MosaicML
// Streaming's py1e: with S shards of sizes n_0..n_{S-1} (N = their sum), K the epoch's key and
// P(n, key) the keyed permutation of [0, n) (plan/keyed_permutation.h):
//   Shard slots: slot t holds shard P(S, K')(t), K' = K or, with JobSpec.sweep_seed, the sweep's
//   key (plan/epoch_plan.h); slots are laid out in order, each taking as many
//   positions as its shard has samples (slot_start[t] = the sum of the sizes of slots < t).
//   Windows: window w is slots [w*W, min((w+1)*W, S)), i.e. positions [b_w, e_w) with
//   b_w = slot_start[w*W]; its n_w = e_w - b_w samples are permuted as a whole: position
//   p = b_w + q holds the sample at window offset b_w + P(n_w, KeyOf(K, w, 2))(q), i.e. record
//   (offset - slot_start[t]) of the shard in the slot t whose positions hold that offset.
// So positions [b_w, e_w) read exactly the shards of window w, each shard lies in one window, and
// within a window the samples of its W shards are uniformly interleaved.
//
// Cost: 16 bytes a shard (slot starts and the slot's first sample index, built in O(S) when the
// epoch's order is made); a lookup is two binary searches over the slots and one permutation:
// O(log S) time, O(1) extra memory.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace stoker {

// Immutable, thread-safe.
class ShardWindowOrder {
 public:
  // Most shards a window may have (bounds the read set a spec can ask for).
  static constexpr uint32_t kMaxWindowShards = 65536;

  // `shard_starts` are the dataset's shard boundaries: shard s holds samples
  // [shard_starts[s], shard_starts[s+1]); shard_starts[0] == 0, non-decreasing, back() == N > 0.
  // INVALID_ARGUMENT naming spec.shuffle_window_shards when window_shards is 0 or past
  // kMaxWindowShards, or spec.shuffle when shard_starts does not describe a sharded dataset.
  // `key` orders the samples inside each window; `slot_key` the shard slots (K both, or the
  // sweep's key: JobSpec.sweep_seed).
  static absl::StatusOr<ShardWindowOrder> Create(absl::Span<const uint64_t> shard_starts,
                                                 uint32_t window_shards, uint64_t key,
                                                 uint64_t slot_key);

  uint64_t size() const { return slot_start_.back(); }
  // The sample at `position`. REQUIRES: position < size().
  uint64_t At(uint64_t position) const;
  // The window holding `position` (for tests and docs). REQUIRES: position < size().
  uint64_t WindowOf(uint64_t position) const;

 private:
  ShardWindowOrder(uint32_t window_shards, uint64_t key)
      : window_shards_(window_shards), key_(key) {}

  // The slot whose positions hold `position`, searching slots [first, last).
  size_t SlotOf(uint64_t position, size_t first, size_t last) const;

  uint32_t window_shards_;
  uint64_t key_;
  std::vector<uint64_t> slot_start_;         // S + 1 entries; back() == N.
  std::vector<uint64_t> slot_first_sample_;  // S entries: first sample index of the slot's shard.
};

}  // namespace stoker

#endif  // STOKER_PLAN_SHARD_WINDOW_ORDER_H_
