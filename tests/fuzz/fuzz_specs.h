#ifndef STOKER_TESTS_FUZZ_FUZZ_SPECS_H_
#define STOKER_TESTS_FUZZ_FUZZ_SPECS_H_

// The job the resume-token target plans for, shared with the seed generator (make_seeds.cc) so
// that seed tokens carry its fingerprint. Fuzz targets only.

#include <cstdint>

#include "coordinator/test_job_spec.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker::fuzz {

inline constexpr uint64_t kFuzzResumeSamples = 40;

// coordinator/test_job_spec.h's small job (40 synthetic 8×8×3 images, to_float, batch 4,
// 2 epochs), globally shuffled and keeping the last partial batch.
inline stoker::v1::JobSpec FuzzResumeSpec(uint32_t world_size) {
  stoker::v1::JobSpec spec = SmallJobSpec(world_size, /*epochs=*/2);
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_GLOBAL);
  spec.set_drop_last(false);
  return spec;
}

}  // namespace stoker::fuzz

#endif  // STOKER_TESTS_FUZZ_FUZZ_SPECS_H_
