#ifndef STOKER_TRAINER_CLIENT_EPOCH_BUFFER_H_
#define STOKER_TRAINER_CLIENT_EPOCH_BUFFER_H_

// The client's delivery logic for one rank, without any networking: buffers arrived batches by
// epoch, drops duplicates by task id and hands out every batch of epoch e before any of epoch
// e+1. How much credit each stream is owed is CreditPolicy's (credit_policy.h).
//
// Delivery (exactly once per epoch per rank):
//   - The rank's batches of an epoch, in plan order ("positions"), are those of its
//     RankSequence (plan/rank_sequence.h, the numbering the coordinator uses too): g = k *
//     world_size + rank for k < batches_per_epoch; a resumed rank's first epoch
//     (Config::first_deal) has its own list instead, of which some were returned before the
//     resume (first_consumed) and are not expected again.
//   - Add() accepts a batch when its task is one of this rank's (this job, epoch < epochs, one
//     of the epoch's positions) and was not seen before in its epoch. Batches of the current
//     epoch are ready at once (unordered) or once every earlier position was handed out
//     (ordered); batches of later epochs wait until their epoch becomes current. A batch of an
//     earlier (finished) epoch, or one returned before the resume, is a duplicate.
//   - Pop() hands out ready batches in arrival order (unordered) or in plan order (ordered).
//     After the last batch of an epoch has been handed out, the next epoch becomes current;
//     after the last epoch, done() is true.
//   - Ordered mode's reorder buffer is bounded by the credit (credit_policy.h): a batch waiting
//     for an earlier position holds its stream's credit like a later-epoch batch does.
//
// Thread-compatible: the Loader guards it with its mutex.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "plan/rank_sequence.h"
#include "trainer_client/batch.h"
#include "trainer_client/credit_policy.h"

namespace stoker {

class EpochBuffer {
 public:
  struct Config {
    uint64_t job_id = 0;
    uint32_t epochs = 0;
    uint64_t batches_per_epoch = 0;  // per rank
    uint32_t rank = 0;
    uint32_t world_size = 1;  // > 0
    // Hand out batches in plan order rather than arrival order.
    bool ordered = false;
    // A resumed rank starts at first_epoch (<= epochs) with first_deal as that epoch's batches
    // in plan order (pads included); first_consumed[i] (same length, or empty: none) marks the
    // ones returned before the resume.
    uint32_t first_epoch = 0;
    bool resumed = false;
    std::vector<uint64_t> first_deal;
    std::vector<bool> first_consumed;
  };

  // What a resume token needs: the current epoch, and which of its positions were handed out
  // (returned by Next) so far, as a prefix count plus the global indices returned beyond it.
  struct Progress {
    uint32_t epoch = 0;
    uint64_t prefix = 0;
    std::vector<uint64_t> other;  // sorted global batch indices
  };

  enum class AddResult {
    kAccepted,   // buffered; ack it and report it received
    kDuplicate,  // already received this epoch: ack it, drop it
    kInvalid,    // not a task of this job and rank: drop it, don't ack
  };

  explicit EpochBuffer(const Config& config);

  // A batch arrived on `stream` (kept with it and returned by Pop).
  AddResult Add(StreamId stream, Batch batch);
  // The next ready batch of the current epoch and, when `stream` is set, the stream it came on;
  // nullopt when none is buffered (or done()).
  std::optional<Batch> Pop(StreamId* stream = nullptr);

  // True once every batch of every epoch was handed out.
  bool done() const { return current_epoch_ >= config_.epochs; }
  // The epoch Pop() hands out now (== epochs when done).
  uint32_t current_epoch() const { return current_epoch_; }
  // Batches of the current epoch not yet handed out.
  uint64_t remaining_in_epoch() const;
  bool has_ready() const;
  // Buffered batches, of every epoch.
  size_t buffered() const { return buffered_; }
  // Up to `max` global batch indices of this rank's current-epoch tasks not received yet, in
  // plan order (for hedging).
  std::vector<uint64_t> MissingInCurrentEpoch(size_t max) const;
  // Distinct tasks accepted so far, and the job's total for this rank (from its first epoch).
  uint64_t accepted_total() const { return accepted_total_; }
  uint64_t expected_total() const;
  Progress progress() const;

 private:
  struct Entry {
    StreamId stream = 0;
    Batch batch;
  };
  struct EpochSlot {
    std::deque<Entry> queue;                // unordered: arrival order
    std::map<uint64_t, Entry> by_position;  // ordered: plan order
    absl::flat_hash_set<uint64_t> seen;     // global batch indices received
  };

  // Batches of `epoch` to hand out (the resumed first epoch: its deal minus first_consumed).
  uint64_t BatchesIn(uint32_t epoch) const;
  // Whether `position` of `epoch`, the resumed first one, was returned before the resume.
  bool ConsumedBeforeResume(uint32_t epoch, uint64_t position) const;
  // Makes `current_epoch_` current: resets its cursor, marks what the resume returned.
  void StartEpoch();
  bool Returned(uint64_t position) const;
  // Marks `position` of the current epoch returned and moves the cursor past returned ones.
  void MarkReturned(uint64_t position);
  void AdvanceEpochIfComplete();

  const Config config_;
  const RankSequence sequence_;
  uint64_t first_epoch_batches_ = 0;  // first_deal minus first_consumed
  uint32_t current_epoch_ = 0;
  uint64_t handed_out_in_epoch_ = 0;
  // Current epoch: the positions handed out (or consumed before a resume) are those below
  // next_position_ and those in returned_ahead_ (all above it): O(batches out of order), not
  // O(batches per epoch), which at web scale is billions.
  uint64_t next_position_ = 0;
  std::set<uint64_t> returned_ahead_;
  std::map<uint32_t, EpochSlot> epochs_;  // current and later epochs with state
  size_t buffered_ = 0;
  uint64_t accepted_total_ = 0;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_EPOCH_BUFFER_H_
