#ifndef STOKER_PLAN_RESUME_PLAN_H_
#define STOKER_PLAN_RESUME_PLAN_H_

// Resuming a trainer rank from resume tokens (proto/stoker/v1/resume.proto): a pure function
// from the tokens saved with a checkpoint, the (new) job spec and the caller's rank to the
// rank's list of global batches for the epoch in progress. Used by the coordinator's OpenJob;
// docs/architecture.md ("Resuming a trainer") walks through the protocol.
//
// Deal(L, universe, r, R, drop_last) splits an ordered list L of global batch indices over R
// ranks like the plan splits an epoch: bpr = drop_last ? floor(|L|/R) : ceil(|L|/R); slot j in
// [0, bpr*R) holds L[j] when j < |L|, else the pad batch universe + (j - |L|) (its samples wrap
// around the epoch's order like the plan's own padding); rank r gets the slots j ≡ r (mod R),
// in slot order. With drop_last the last |L| mod R batches of L are not delivered.
//
// A token's deal is Deal([0, universe) - done_before, rank, world_size): for a run that never
// resumed, exactly the plan's g ≡ rank (mod world_size). Given tokens of epoch e:
//   - same world size as the tokens: the caller's own token is needed; its deal stays and the
//     rank receives the deal minus the batches the token says were consumed, in deal order (so
//     in ordered mode the resumed sequence equals an uninterrupted run's);
//   - another world size: the tokens of all old ranks are needed; remaining = [0, universe) -
//     done_before - (every rank's consumed), ascending, and the caller's deal is
//     Deal(remaining, universe, rank, new world size). The new universe counts the pads.
// Epochs after e follow the normal plan. The token bytes are read by resume_token.h. Thread-safe
// (pure functions).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "plan/resume_token.h"
#include "stoker/v1/pipeline.pb.h"
#include "stoker/v1/resume.pb.h"

namespace stoker {

// The most global batches a resumed epoch may span (a token's universe). A resumed rank's
// batches (at most universe / world_size + 1, each below 2^24) are journaled in one record and
// must fit FileJournal::kMaxRecordBytes; PlanResume's work and memory are O(universe).
inline constexpr uint64_t kMaxResumeUniverse = uint64_t{1} << 23;

// See the file comment. REQUIRES: world_size > 0, rank < world_size.
std::vector<uint64_t> Deal(absl::Span<const uint64_t> order, uint64_t universe, uint32_t rank,
                           uint32_t world_size, bool drop_last);

// Global batches of the rank's first epoch still to deliver: the point's deal minus its
// consumed batches, in deal order. Empty for a point that did not resume.
std::vector<uint64_t> RemainingBatches(const stoker::v1::ResumePoint& point);

// Where rank `rank` of a job with `spec` starts, from serialized ResumeToken messages (at least
// one). Errors, all INVALID_ARGUMENT naming the problem ("resume_tokens[i]: ..."): a token that
// does not parse or has another version; tokens of different jobs, epochs, world sizes or
// incarnations (universe, done_before); a rank given twice; a fingerprint that does not match
// `spec`; an epoch past spec.epochs; consumed batches outside the token's deal; the same world
// size without the caller's token; another world size without the tokens of every old rank
// ("resuming with world_size 3 from a checkpoint of world_size 2 needs the tokens of all 2
// ranks, got 1"); a universe the workers would refuse (at or past BatchIndexLimit(), epoch_plan.h)
// or over `max_universe` (checked before anything is sized by it: the memory and work are
// O(universe) for another world size, O(universe / world_size) for the same one).
// REQUIRES: spec.world_size() > 0, spec.batch_size() > 0, rank < spec.world_size().
absl::StatusOr<stoker::v1::ResumePoint> PlanResume(absl::Span<const std::string> tokens,
                                                   const stoker::v1::JobSpec& spec,
                                                   uint64_t num_samples, uint32_t rank,
                                                   uint64_t max_universe = kMaxResumeUniverse);

}  // namespace stoker

#endif  // STOKER_PLAN_RESUME_PLAN_H_
