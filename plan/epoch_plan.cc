#include "plan/epoch_plan.h"

#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/counter_rng.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

using stoker::v1::ShuffleMode;

// Fisher-Yates over `values`, drawing from `rng` (the documented, fixed order of draws).
template <typename T>
void Shuffle(std::vector<T>& values, CounterRng& rng) {
  for (size_t i = values.size(); i > 1; --i) {
    const size_t j = rng.UniformInt(i);
    std::swap(values[i - 1], values[j]);
  }
}

}  // namespace

uint64_t BatchesPerRank(uint64_t num_samples, uint32_t batch_size, uint32_t world_size,
                        bool drop_last) {
  if (drop_last) return num_samples / batch_size / world_size;
  const uint64_t global = (num_samples + batch_size - 1) / batch_size;
  return (global + world_size - 1) / world_size;
}

std::vector<uint64_t> PermuteSamples(uint64_t num_samples, uint64_t seed, uint32_t epoch,
                                     ShuffleMode mode, uint32_t block) {
  std::vector<uint64_t> order(num_samples);
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (mode == stoker::v1::SHUFFLE_MODE_NONE || num_samples < 2) return order;
  CounterRng rng(KeyOf(seed ^ kPlanDomain, epoch, 0));
  if (mode != stoker::v1::SHUFFLE_MODE_BLOCK) {  // GLOBAL and unspecified.
    Shuffle(order, rng);
    return order;
  }
  const uint64_t blocks = (num_samples + block - 1) / block;
  std::vector<uint64_t> block_order(blocks);
  std::iota(block_order.begin(), block_order.end(), uint64_t{0});
  Shuffle(block_order, rng);
  std::vector<uint64_t> members;
  members.reserve(block);
  size_t out = 0;
  for (uint64_t b : block_order) {
    const uint64_t begin = b * block;
    const uint64_t end = std::min<uint64_t>(begin + block, num_samples);
    members.resize(end - begin);
    std::iota(members.begin(), members.end(), begin);
    Shuffle(members, rng);
    for (uint64_t index : members) order[out++] = index;
  }
  return order;
}

absl::StatusOr<EpochPlan> EpochPlan::Create(const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                            uint32_t epoch) {
  if (num_samples == 0) return absl::InvalidArgumentError("num_samples: must be > 0");
  if (spec.batch_size() == 0) return absl::InvalidArgumentError("spec.batch_size: must be > 0");
  if (spec.world_size() == 0) return absl::InvalidArgumentError("spec.world_size: must be > 0");
  if (spec.shuffle() == stoker::v1::SHUFFLE_MODE_BLOCK && spec.shuffle_block() == 0) {
    return absl::InvalidArgumentError("spec.shuffle_block: must be > 0 with SHUFFLE_MODE_BLOCK");
  }
  return EpochPlan(
      PermuteSamples(num_samples, spec.seed(), epoch, spec.shuffle(), spec.shuffle_block()), epoch,
      spec.batch_size(), spec.world_size(),
      BatchesPerRank(num_samples, spec.batch_size(), spec.world_size(), spec.drop_last()));
}

EpochPlan::EpochPlan(std::vector<uint64_t> order, uint32_t epoch, uint32_t batch_size,
                     uint32_t world_size, uint64_t batches_per_rank)
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
    index = order_[position];
    if (++position == n) position = 0;
  }
  return absl::OkStatus();
}

}  // namespace stoker
