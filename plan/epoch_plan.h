#ifndef STOKER_PLAN_EPOCH_PLAN_H_
#define STOKER_PLAN_EPOCH_PLAN_H_

// The epoch plan (docs/architecture.md, Work model): a pure function of the job's spec and epoch.
//
//   order = Permute(N, seed, epoch, shuffle)
//   global batch g covers plan positions [g*B, (g+1)*B); position p holds order[p mod N]
//   rank r gets the global batches g ≡ r (mod R), i.e. g = k*R + r for k = 0..BatchesPerRank-1
//
// Equal counts per rank: with drop_last, BatchesPerRank = floor(floor(N/B) / R) and the tail of
// the order is not used this epoch; without it, BatchesPerRank = ceil(ceil(N/B) / R) and the
// last batches wrap around to the start of the order (as PyTorch's DistributedSampler pads), so
// every sample is seen and a few are seen twice.
//
// Shuffle modes (EpochOrder below): NONE is the identity; GLOBAL and BLOCK are computed one
// position at a time from KeyedPermutation (plan/keyed_permutation.h), so a plan holds no
// per-sample state: O(1) memory and O(1) expected time per lookup (at most a few dozen Mix64),
// identical in every process and on every machine. With K = KeyOf(seed ^ kPlanDomain, epoch, 0)
// (common/counter_rng.h) and P(n, key) the keyed permutation of [0, n):
//   GLOBAL: order[p] = P(N, K)(p).
//   BLOCK:  the samples form M = ceil(N/W) blocks of W consecutive indices, the last of
//           r = N - (M-1)*W samples. Block slots are permuted by P(M, K): slot t holds block
//           b = P(M, K)(t), each block taking as many positions as it has samples (so the short
//           block moves like the others and the positions after it shift by W - r). Position q
//           inside block b holds sample b*W + P(size_b, KeyOf(K, b, 1))(q).
//   SHARD_WINDOW: shards permuted by P(S, K), grouped into windows of W shards, each window's
//           samples permuted as a whole (plan/shard_window_order.h). It needs the dataset's
//           shard boundaries and holds 16 bytes a shard; a lookup is O(log S).
// Sweep alignment (JobSpec.sweep_seed != 0, BLOCK and SHARD_WINDOW only): the block slots'
// permutation P(M, K) and the shard slots' P(S, K) take K' = KeyOf(sweep_seed ^ kPlanDomain,
// epoch, 0) instead of K; the samples inside a block or window keep K. Jobs sharing a sweep_seed
// (same N, block or shards and window) hold the same block or window at every position.
// Changing any of this changes every plan (and must bump kResumeTokenVersion).

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "plan/keyed_permutation.h"
#include "plan/shard_window_order.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// Batches each rank gets per epoch. REQUIRES: batch_size > 0, world_size > 0.
uint64_t BatchesPerRank(uint64_t num_samples, uint32_t batch_size, uint32_t world_size,
                        bool drop_last);

// The sample order of one epoch, computed on demand (see above). Immutable, thread-safe, cheap to
// copy.
class EpochOrder {
 public:
  // REQUIRES: num_samples > 0; block > 0 when mode is BLOCK. Unspecified mode is GLOBAL.
  // sweep_seed (0: none) orders the blocks of BLOCK; ignored by the other modes.
  EpochOrder(uint64_t num_samples, uint64_t seed, uint32_t epoch, stoker::v1::ShuffleMode mode,
             uint32_t block, uint64_t sweep_seed = 0);
  // SHUFFLE_MODE_SHARD_WINDOW. REQUIRES: windows non-null.
  explicit EpochOrder(std::shared_ptr<const ShardWindowOrder> windows);

  uint64_t size() const { return num_samples_; }
  // The sample at `position`. REQUIRES: position < size().
  uint64_t At(uint64_t position) const;

 private:
  uint64_t BlockAt(uint64_t position) const;

  uint64_t num_samples_;
  stoker::v1::ShuffleMode mode_;
  uint64_t key_;
  // GLOBAL: the samples' permutation; BLOCK: the block slots'.
  KeyedPermutation permutation_;
  // BLOCK only: W, r (the last block's size) and the slot holding the last block.
  uint64_t block_ = 0;
  uint64_t last_block_size_ = 0;
  uint64_t last_block_slot_ = 0;
  // SHARD_WINDOW only.
  std::shared_ptr<const ShardWindowOrder> windows_;
};

// Global batch indices of an epoch must lie below this. A resumed epoch (plan/resume_plan.h)
// adds pad batches past the plan's `global_batches`; each resume adds fewer than world_size.
// Workers refuse indices at or past the limit, and the coordinator refuses a resume past it.
inline uint64_t BatchIndexLimit(uint64_t global_batches, uint32_t world_size) {
  return 2 * global_batches + 2 * uint64_t{world_size};
}

// Global batch index of rank `rank`'s k-th batch, and back.
inline uint64_t GlobalBatchIndex(uint32_t rank, uint64_t k, uint32_t world_size) {
  return k * world_size + rank;
}
inline uint32_t RankOfBatch(uint64_t global_batch, uint32_t world_size) {
  return static_cast<uint32_t>(global_batch % world_size);
}

// One epoch's plan. Immutable, thread-safe.
class EpochPlan {
 public:
  // INVALID_ARGUMENT when num_samples, batch_size or world_size is 0, BLOCK has block 0, or the
  // plan positions of the batch index limit would overflow 64 bits; SHARD_WINDOW as
  // ShardWindowOrder::Create, and when shard_starts does not end at num_samples. `shard_starts`
  // (Source::shard_starts()) is used by SHARD_WINDOW only.
  static absl::StatusOr<EpochPlan> Create(const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                          uint32_t epoch,
                                          absl::Span<const uint64_t> shard_starts = {});

  uint32_t epoch() const { return epoch_; }
  uint64_t num_samples() const { return order_.size(); }
  uint32_t batch_size() const { return batch_size_; }
  uint64_t batches_per_rank() const { return batches_per_rank_; }
  uint64_t global_batches() const { return batches_per_rank_ * world_size_; }

  // The sample at plan position `position` (global batch g covers positions [g*B, (g+1)*B));
  // positions wrap around the order.
  uint64_t SampleAt(uint64_t position) const { return order_.At(position % order_.size()); }

  // OUT_OF_RANGE when g >= BatchIndexLimit(global_batches(), world size). Indices from
  // global_batches() on are pad batches of a resumed epoch (their positions wrap around); which
  // of them are in play only the coordinator knows, so the worker checks only the limit.
  absl::Status CheckBatch(uint64_t g) const;

  // Writes the batch_size() sample indices of global batch `g` to `out`.
  // OUT_OF_RANGE as CheckBatch; INVALID_ARGUMENT when out has the wrong size.
  absl::Status BatchSamples(uint64_t g, absl::Span<uint64_t> out) const;

 private:
  EpochPlan(EpochOrder order, uint32_t epoch, uint32_t batch_size, uint32_t world_size,
            uint64_t batches_per_rank);

  EpochOrder order_;
  uint32_t epoch_;
  uint32_t batch_size_;
  uint32_t world_size_;
  uint64_t batches_per_rank_;
};

}  // namespace stoker

#endif  // STOKER_PLAN_EPOCH_PLAN_H_
