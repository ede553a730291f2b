#ifndef STOKER_TRAINER_CLIENT_BAD_SAMPLE_BUDGET_H_
#define STOKER_TRAINER_CLIENT_BAD_SAMPLE_BUDGET_H_

// The job's error-rate limit on bad samples (docs/architecture.md, Bad input), enforced by each
// rank's client: workers replace bad samples and report them per batch (BatchHeader.bad_samples);
// the client adds up those of each epoch and fails the job once they exceed
// max_bad_sample_fraction × (the rank's samples per epoch). docs/decisions/0013-bad-samples.md says
// why here. Thread-compatible (the Loader calls it under its lock).

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

class BadSampleBudget {
 public:
  // The default limit when JobSpec.max_bad_sample_fraction is unset.
  static constexpr double kDefaultFraction = 0.01;

  BadSampleBudget(double max_fraction, uint64_t samples_per_epoch, uint32_t rank)
      : max_fraction_(max_fraction), samples_per_epoch_(samples_per_epoch), rank_(rank) {}

  // Adds one accepted batch's counts. DATA_LOSS once the batch's epoch is over the limit, e.g.
  // "7 of 640 samples of epoch 0 for rank 0 unreadable (limit 1%): corrupt_record=7; the
  // workers' logs name each (shard, offset, reason)". Every later call returns an error too.
  absl::Status Add(const stoker::v1::BatchHeader& header);

 private:
  struct EpochCounts {
    uint64_t total = 0;
    std::map<std::string, uint64_t> by_reason;
  };
  const double max_fraction_;
  const uint64_t samples_per_epoch_;
  const uint32_t rank_;
  std::map<uint32_t, EpochCounts> epochs_;
  absl::Status exceeded_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_BAD_SAMPLE_BUDGET_H_
