#include "trainer_client/bad_sample_budget.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace stoker {

absl::Status BadSampleBudget::Add(const stoker::v1::BatchHeader& header) {
  if (!exceeded_.ok() || header.bad_samples().empty()) return exceeded_;
  const uint32_t epoch = header.task().epoch();
  EpochCounts& counts = epochs_[epoch];
  for (const auto& [reason, n] : header.bad_samples()) {
    counts.total += n;
    counts.by_reason[reason] += n;
  }
  // Epochs before this one are over: their counts are no longer needed.
  epochs_.erase(epochs_.begin(), epochs_.lower_bound(epoch == 0 ? 0 : epoch - 1));
  if (counts.total <= max_fraction_ * static_cast<double>(samples_per_epoch_)) {
    return absl::OkStatus();
  }
  exceeded_ = absl::DataLossError(
      absl::StrCat(counts.total, " of ", samples_per_epoch_, " samples of epoch ", epoch,
                   " for rank ", rank_, " unreadable (limit ", max_fraction_ * 100,
                   "%): ", absl::StrJoin(counts.by_reason, ", ", absl::PairFormatter("=")),
                   "; the workers' logs name each (shard, offset, reason)"));
  return exceeded_;
}

}  // namespace stoker
