#ifndef STOKER_PLAN_RESUME_TOKEN_H_
#define STOKER_PLAN_RESUME_TOKEN_H_

// The resume token's codec (proto/stoker/v1/resume.proto ResumeToken): the one place that
// writes and reads the bytes a trainer saves beside its checkpoint, and the one version constant.
// The trainer client encodes (Loader::ResumeToken()); the coordinator decodes (PlanResume in
// resume_plan.h). Pure functions, thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "stoker/v1/pipeline.pb.h"
#include "stoker/v1/resume.pb.h"

namespace stoker {

// The token format this build writes and the only one it reads. Version 2: epoch plans are the
// keyed permutation of plan/epoch_plan.h; a version 1 token's positions were made with the older
// Fisher-Yates order and mean other samples now.
inline constexpr uint32_t kResumeTokenVersion = 2;

// A stable 64-bit hash (FNV-1a) of the spec's deterministic serialization: the same spec gives
// the same value in every process and on every machine.
uint64_t JobSpecHash(const stoker::v1::JobSpec& spec);

// JobSpecHash of the spec with world_size cleared: equal for the specs a checkpoint may resume
// with.
uint64_t SpecFingerprint(const stoker::v1::JobSpec& spec);

// Sorted indices as ranges, and back.
std::vector<stoker::v1::IndexRange> ToRanges(absl::Span<const uint64_t> sorted);
std::vector<uint64_t> FromRanges(
    const google::protobuf::RepeatedPtrField<stoker::v1::IndexRange>& ranges);

// Which entries of the point's deal were returned before the resume (its delivered_prefix and
// delivered_other), one flag per deal entry. All false for a point that did not resume.
std::vector<bool> ConsumedBeforeResume(const stoker::v1::ResumePoint& point);

// Where a rank stands, as its trainer client knows it.
struct RankPosition {
  std::string job_name;
  uint32_t world_size = 0;
  uint32_t rank = 0;
  // The job's batches per rank per epoch (OpenJobResponse).
  uint64_t batches_per_rank = 0;
  // The epoch in progress, and which of its positions were returned: the first `prefix`
  // positions and the global batches `other` (sorted) beyond them.
  uint32_t epoch = 0;
  uint64_t prefix = 0;
  std::vector<uint64_t> other;
};

// The serialized token of a rank at `position` that started at `start` (OpenJob's ResumePoint):
// version kResumeTokenVersion, start's spec fingerprint and tenant; the universe and done_before
// are the start's while the rank is still in its resumed first epoch, else the plan's own
// (batches_per_rank * world_size, nothing done before).
std::string EncodeResumeToken(const stoker::v1::ResumePoint& start, const RankPosition& position);

// The token in `bytes`. INVALID_ARGUMENT when they do not parse ("not a serialized ResumeToken
// (it does not parse)") or carry another version ("version 9 is not supported (want 1)").
absl::StatusOr<stoker::v1::ResumeToken> DecodeResumeToken(absl::string_view bytes);

}  // namespace stoker

#endif  // STOKER_PLAN_RESUME_TOKEN_H_
