// Fuzz target: resume tokens (plan/resume_token.h) and the resume plan made from them
// (plan/resume_plan.h), as OpenJob receives them from a trainer's checkpoint.
//
// Input: one byte choosing the new world size (1 + b % 4) and the rank, then up to 8 serialized
// tokens framed by SplitChunks (fuzz_input.h). The job is FuzzResumeSpec (40 samples, batch 4,
// 2 epochs); the seeds (make_seeds.cc) are tokens of that job. Invariants checked: a bad token
// is INVALID_ARGUMENT; an accepted plan's remaining batches are distinct.

#include <set>

#include "plan/resume_plan.h"
#include "plan/resume_token.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_specs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  if (size < 1) return 0;
  const uint32_t world_size = 1 + data[0] % 4;
  const uint32_t rank = (data[0] / 4) % world_size;
  const absl::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> tokens;
  for (absl::string_view chunk : stoker::fuzz::SplitChunks(input, 8)) {
    tokens.emplace_back(chunk);
    absl::StatusOr<stoker::v1::ResumeToken> token = stoker::DecodeResumeToken(chunk);
    if (!token.ok()) FUZZ_CHECK(token.status().code() == absl::StatusCode::kInvalidArgument);
  }
  if (tokens.empty()) return 0;
  const stoker::v1::JobSpec spec = stoker::fuzz::FuzzResumeSpec(world_size);
  absl::StatusOr<stoker::v1::ResumePoint> point =
      stoker::PlanResume(tokens, spec, stoker::fuzz::kFuzzResumeSamples, rank);
  if (!point.ok()) {
    FUZZ_CHECK(point.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  const std::vector<uint64_t> remaining = stoker::RemainingBatches(*point);
  FUZZ_CHECK(std::set<uint64_t>(remaining.begin(), remaining.end()).size() == remaining.size());
  stoker::ConsumedBeforeResume(*point);
  return 0;
}
