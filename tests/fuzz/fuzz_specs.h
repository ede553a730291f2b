#ifndef STOKER_TESTS_FUZZ_FUZZ_SPECS_H_
#define STOKER_TESTS_FUZZ_FUZZ_SPECS_H_

// What targets share with the seed generator (make_seeds.cc): the job the resume-token target
// plans for (so that seed tokens carry its fingerprint), and the step selectors of the stateful
// targets (a step is [selector byte][argument], framed by SplitChunks). Fuzz targets only.

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

// stream_session_fuzz.cc: a client message (argument: a serialized ClientMessage), a lease
// ([at most]), a batch produced ([failed if low nibble 0xf][size, 2 bytes][fill: odd is noise]),
// a write finished, time passing ([milliseconds]), the client going away.
enum StreamEvent : uint8_t { kClientMessage, kLease, kProduce, kWrite, kTime, kEnd, kStreamEvents };

// coordinator_rpc_fuzz.cc: the RPC (argument: its serialized request), or time passing
// ([tenths of a second], then CheckLiveness).
enum CoordinatorStep : uint8_t {
  kOpenJob,
  kGetJob,
  kRegisterWorker,
  kWorkerHeartbeat,
  kLeaseTasks,
  kClientHeartbeat,
  kTimePasses,
  kCoordinatorSteps
};

}  // namespace stoker::fuzz

#endif  // STOKER_TESTS_FUZZ_FUZZ_SPECS_H_
