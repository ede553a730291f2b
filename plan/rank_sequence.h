#ifndef STOKER_PLAN_RANK_SEQUENCE_H_
#define STOKER_PLAN_RANK_SEQUENCE_H_

// The tasks of one trainer rank across a job's epochs, numbered the same way by the coordinator
// (which leases and completes them by sequence number) and by the trainer client (which buffers
// and hands them out by position in their epoch). One definition, used by both ends.
//
// Plain rank r of R ranks, P = batches per rank per epoch (epoch_plan.h), E epochs:
//   epoch e in [0, E) holds the positions k in [0, P); position k is global batch g = k*R + r;
//   sequence number s = e*P + k.
// Resumed rank (resume_plan.h): the first epoch e0 holds `first_batches` (any global batch
// indices of e0, pad batches included) in the given order; the epochs after e0 follow the plain
// plan; epochs before e0 are not part of the sequence. Sequence numbers:
//   s < |first|:  first_batches[s] of epoch e0
//   s >= |first|: epoch e0 + 1 + (s - |first|) / P, position (s - |first|) mod P.
// A resumed rank's first batches must be distinct and below BatchIndexLimit (epoch_plan.h); the
// constructor accepts any list (a repeated batch keeps its first position) and CheckResumed()
// says what is wrong with it.
//
// Copying is cheap (the first epoch's list is shared). Immutable, thread-safe.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace stoker {

class RankSequence {
 public:
  // A task of the sequence.
  struct Task {
    uint32_t epoch = 0;
    uint64_t batch_index = 0;  // global batch index
  };

  // A plain rank. REQUIRES: world_size > 0, rank < world_size.
  RankSequence(uint32_t rank, uint32_t world_size, uint64_t batches_per_rank, uint32_t epochs);
  // A rank resumed at `first_epoch` with `first_batches` as that epoch's batches.
  // REQUIRES: as above.
  static RankSequence Resumed(uint32_t rank, uint32_t world_size, uint64_t batches_per_rank,
                              uint32_t epochs, uint32_t first_epoch,
                              std::vector<uint64_t> first_batches);

  // INVALID_ARGUMENT "<field>[i]: batch g is listed twice or past the limit L" when a first
  // batch repeats or is at or past BatchIndexLimit; OK for a plain rank.
  absl::Status CheckResumed(absl::string_view field) const;

  uint32_t rank() const { return rank_; }
  uint32_t world_size() const { return world_size_; }
  uint64_t batches_per_rank() const { return batches_per_rank_; }
  uint32_t epochs() const { return epochs_; }
  bool resumed() const { return first_ != nullptr; }
  // The first epoch of the sequence (0 for a plain rank).
  uint32_t first_epoch() const { return first_epoch_; }
  // A resumed rank's first-epoch batches (empty for a plain rank).
  const std::vector<uint64_t>& first_batches() const;

  // Positions in `epoch`: 0 for an epoch outside the sequence.
  uint64_t BatchesIn(uint32_t epoch) const;
  // Tasks of the whole sequence.
  uint64_t size() const;
  // The global batch at `position` of `epoch`. REQUIRES: position < BatchesIn(epoch).
  uint64_t BatchAt(uint32_t epoch, uint64_t position) const;
  // The position of global batch `g` in `epoch`; nullopt when it is not one of this rank's
  // batches of that epoch (or the epoch is outside the sequence).
  std::optional<uint64_t> PositionOf(uint32_t epoch, uint64_t g) const;
  // The task with sequence number `seq`. REQUIRES: seq < size().
  Task TaskAt(uint64_t seq) const;
  // The sequence number of (epoch, g); nullopt as PositionOf.
  std::optional<uint64_t> SeqOf(uint32_t epoch, uint64_t g) const;

 private:
  struct FirstEpoch {
    std::vector<uint64_t> batches;
    absl::flat_hash_map<uint64_t, uint64_t> positions;  // batch -> first position in `batches`
  };

  uint32_t rank_;
  uint32_t world_size_;
  uint64_t batches_per_rank_;
  uint32_t epochs_;
  uint32_t first_epoch_ = 0;
  std::shared_ptr<const FirstEpoch> first_;  // null for a plain rank
};

}  // namespace stoker

#endif  // STOKER_PLAN_RANK_SEQUENCE_H_
