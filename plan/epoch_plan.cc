#include "plan/epoch_plan.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/counter_rng.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

using stoker::v1::ShuffleMode;

// K of plan/epoch_plan.h for `seed` (the job's, or its sweep_seed for the order of blocks and
// windows).
uint64_t EpochKey(uint64_t seed, uint32_t epoch) { return KeyOf(seed ^ kPlanDomain, epoch, 0); }

uint64_t BlockCount(uint64_t num_samples, uint64_t block) {
  return num_samples / block + (num_samples % block != 0 ? 1 : 0);
}

}  // namespace

uint64_t BatchesPerRank(uint64_t num_samples, uint32_t batch_size, uint32_t world_size,
                        bool drop_last) {
  if (drop_last) return num_samples / batch_size / world_size;
  const uint64_t global = num_samples / batch_size + (num_samples % batch_size != 0 ? 1 : 0);
  return global / world_size + (global % world_size != 0 ? 1 : 0);
}

EpochOrder::EpochOrder(uint64_t num_samples, uint64_t seed, uint32_t epoch, ShuffleMode mode,
                       uint32_t block, uint64_t sweep_seed)
    : num_samples_(num_samples),
      mode_(mode),
      key_(EpochKey(seed, epoch)),
      permutation_(
          mode == stoker::v1::SHUFFLE_MODE_BLOCK ? BlockCount(num_samples, block) : num_samples,
          mode == stoker::v1::SHUFFLE_MODE_BLOCK && sweep_seed != 0 ? EpochKey(sweep_seed, epoch)
                                                                    : key_) {
  if (mode_ != stoker::v1::SHUFFLE_MODE_BLOCK) return;
  block_ = block;
  const uint64_t blocks = permutation_.size();
  last_block_size_ = num_samples - (blocks - 1) * block_;
  last_block_slot_ = permutation_.Inverse(blocks - 1);
}

EpochOrder::EpochOrder(std::shared_ptr<const ShardWindowOrder> windows)
    : num_samples_(windows->size()),
      mode_(stoker::v1::SHUFFLE_MODE_SHARD_WINDOW),
      key_(0),
      permutation_(0, 0),
      windows_(std::move(windows)) {}

uint64_t EpochOrder::At(uint64_t position) const {
  switch (mode_) {
    case stoker::v1::SHUFFLE_MODE_NONE:
      return position;
    case stoker::v1::SHUFFLE_MODE_SHARD_WINDOW:
      return windows_->At(position);
    case stoker::v1::SHUFFLE_MODE_BLOCK:
      return BlockAt(position);
    default:  // GLOBAL and unspecified.
      return permutation_(position);
  }
}

uint64_t EpochOrder::BlockAt(uint64_t position) const {
  // Slots before the last block's are full; the positions after it shift by W - r.
  const uint64_t short_begin = last_block_slot_ * block_;
  const uint64_t short_end = short_begin + last_block_size_;
  uint64_t slot;
  uint64_t offset;
  if (position < short_begin) {
    slot = position / block_;
    offset = position % block_;
  } else if (position < short_end) {
    slot = last_block_slot_;
    offset = position - short_begin;
  } else {
    slot = last_block_slot_ + 1 + (position - short_end) / block_;
    offset = (position - short_end) % block_;
  }
  const uint64_t b = permutation_(slot);
  const uint64_t size = b + 1 == permutation_.size() ? last_block_size_ : block_;
  return b * block_ + KeyedPermutation(size, KeyOf(key_, b, 1))(offset);
}

namespace {

// The epoch's order per the spec's shuffle mode.
absl::StatusOr<EpochOrder> MakeOrder(const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                     uint32_t epoch, absl::Span<const uint64_t> shard_starts) {
  if (spec.shuffle() != stoker::v1::SHUFFLE_MODE_SHARD_WINDOW) {
    return EpochOrder(num_samples, spec.seed(), epoch, spec.shuffle(), spec.shuffle_block(),
                      spec.sweep_seed());
  }
  if (!shard_starts.empty() && shard_starts.back() != num_samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.shuffle: the shards hold ", shard_starts.back(), " samples, not ", num_samples));
  }
  const uint64_t key = EpochKey(spec.seed(), epoch);
  ASSIGN_OR_RETURN(
      ShardWindowOrder windows,
      ShardWindowOrder::Create(shard_starts, spec.shuffle_window_shards(), key,
                               spec.sweep_seed() != 0 ? EpochKey(spec.sweep_seed(), epoch) : key));
  return EpochOrder(std::make_shared<const ShardWindowOrder>(std::move(windows)));
}

}  // namespace

absl::StatusOr<EpochPlan> EpochPlan::Create(const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                            uint32_t epoch,
                                            absl::Span<const uint64_t> shard_starts) {
  if (num_samples == 0) return absl::InvalidArgumentError("num_samples: must be > 0");
  if (spec.batch_size() == 0) return absl::InvalidArgumentError("spec.batch_size: must be > 0");
  if (spec.world_size() == 0) return absl::InvalidArgumentError("spec.world_size: must be > 0");
  if (spec.shuffle() == stoker::v1::SHUFFLE_MODE_BLOCK && spec.shuffle_block() == 0) {
    return absl::InvalidArgumentError("spec.shuffle_block: must be > 0 with SHUFFLE_MODE_BLOCK");
  }
  const uint64_t batches_per_rank =
      BatchesPerRank(num_samples, spec.batch_size(), spec.world_size(), spec.drop_last());
  // Every position a worker may compute, g * batch_size for g below the limit, must fit 64 bits.
  const unsigned __int128 last_position =
      (2 * static_cast<unsigned __int128>(batches_per_rank) * spec.world_size() +
       2 * static_cast<unsigned __int128>(spec.world_size())) *
      spec.batch_size();
  if (last_position > std::numeric_limits<uint64_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.batch_size: ", spec.batch_size(), " with world_size ", spec.world_size(),
                     " and ", num_samples, " samples puts plan positions past 2^64"));
  }
  ASSIGN_OR_RETURN(EpochOrder order, MakeOrder(spec, num_samples, epoch, shard_starts));
  return EpochPlan(std::move(order), epoch, spec.batch_size(), spec.world_size(), batches_per_rank);
}

EpochPlan::EpochPlan(EpochOrder order, uint32_t epoch, uint32_t batch_size, uint32_t world_size,
                     uint64_t batches_per_rank)
    : order_(std::move(order)),
      epoch_(epoch),
      batch_size_(batch_size),
      world_size_(world_size),
      batches_per_rank_(batches_per_rank) {}

absl::Status EpochPlan::CheckBatch(uint64_t g) const {
  if (g >= BatchIndexLimit(global_batches(), world_size_)) {
    return absl::OutOfRangeError(
        absl::StrCat("batch ", g, " of epoch ", epoch_, " is past the limit of ",
                     BatchIndexLimit(global_batches(), world_size_), " (the plan has ",
                     global_batches(), " batches; resumed epochs add pad batches)"));
  }
  return absl::OkStatus();
}

absl::Status EpochPlan::BatchSamples(uint64_t g, absl::Span<uint64_t> out) const {
  RETURN_IF_ERROR(CheckBatch(g));
  if (out.size() != batch_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("output holds ", out.size(), " indices, batch size is ", batch_size_));
  }
  const uint64_t n = order_.size();
  uint64_t position = (g * batch_size_) % n;
  for (uint64_t& index : out) {
    index = order_.At(position);
    if (++position == n) position = 0;
  }
  return absl::OkStatus();
}

}  // namespace stoker
