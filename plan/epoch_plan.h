#ifndef STOKER_PLAN_EPOCH_PLAN_H_
#define STOKER_PLAN_EPOCH_PLAN_H_

// The epoch plan (DESIGN.md §3): a pure function of the job's spec and the epoch.
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
// Shuffle modes: NONE is the identity; GLOBAL is a Fisher-Yates permutation; BLOCK permutes the
// blocks of W consecutive samples (the last block may be shorter and moves like the others), then
// shuffles inside each block. Randomness comes from CounterRng (common/counter_rng.h) keyed by
// (seed, epoch, kPlanDomain), so plans never change across versions or machines:
//   GLOBAL: for i = N-1 down to 1: j = UniformInt(i + 1); swap(order[i], order[j])
//   BLOCK:  the same over block numbers, then the same inside each block in plan order.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// Batches each rank gets per epoch. REQUIRES: batch_size > 0, world_size > 0.
uint64_t BatchesPerRank(uint64_t num_samples, uint32_t batch_size, uint32_t world_size,
                        bool drop_last);

// The sample order of one epoch. REQUIRES: block > 0 when mode is BLOCK.
std::vector<uint64_t> PermuteSamples(uint64_t num_samples, uint64_t seed, uint32_t epoch,
                                     stoker::v1::ShuffleMode mode, uint32_t block);

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
  // INVALID_ARGUMENT when num_samples, batch_size or world_size is 0, or BLOCK has block 0.
  static absl::StatusOr<EpochPlan> Create(const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                          uint32_t epoch);

  uint32_t epoch() const { return epoch_; }
  uint64_t num_samples() const { return order_.size(); }
  uint32_t batch_size() const { return batch_size_; }
  uint64_t batches_per_rank() const { return batches_per_rank_; }
  uint64_t global_batches() const { return batches_per_rank_ * world_size_; }

  // The sample at plan position `position` (global batch g covers positions [g*B, (g+1)*B));
  // positions wrap around the order.
  uint64_t SampleAt(uint64_t position) const { return order_[position % order_.size()]; }

  // OUT_OF_RANGE when g >= BatchIndexLimit(global_batches(), world size). Indices from
  // global_batches() on are pad batches of a resumed epoch (their positions wrap around); which
  // of them are in play only the coordinator knows, so the worker checks only the limit.
  absl::Status CheckBatch(uint64_t g) const;

  // Writes the batch_size() sample indices of global batch `g` to `out`.
  // OUT_OF_RANGE as CheckBatch; INVALID_ARGUMENT when out has the wrong size.
  absl::Status BatchSamples(uint64_t g, absl::Span<uint64_t> out) const;

 private:
  EpochPlan(std::vector<uint64_t> order, uint32_t epoch, uint32_t batch_size, uint32_t world_size,
            uint64_t batches_per_rank);

  std::vector<uint64_t> order_;
  uint32_t epoch_;
  uint32_t batch_size_;
  uint32_t world_size_;
  uint64_t batches_per_rank_;
};

}  // namespace stoker

#endif  // STOKER_PLAN_EPOCH_PLAN_H_
