#ifndef STOKER_TESTS_FUZZ_FUZZ_SPECS_H_
#define STOKER_TESTS_FUZZ_FUZZ_SPECS_H_

// The job the resume-token target plans for, shared with the seed generator (make_seeds.cc) so
// that seed tokens carry its fingerprint. Fuzz targets only.

#include <cstdint>

#include "stoker/v1/pipeline.pb.h"

namespace stoker::fuzz {

inline constexpr uint64_t kFuzzResumeSamples = 40;

// 40 synthetic 8×8×3 images, to_float, batch 4, 2 epochs, global shuffle.
inline stoker::v1::JobSpec FuzzResumeSpec(uint32_t world_size) {
  stoker::v1::JobSpec spec;
  stoker::v1::SyntheticSource* source = spec.mutable_dataset()->mutable_synthetic();
  source->set_num_samples(kFuzzResumeSamples);
  source->set_height(8);
  source->set_width(8);
  source->set_channels(3);
  source->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(4);
  spec.set_seed(7);
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(world_size);
  spec.set_epochs(2);
  spec.set_drop_last(false);
  return spec;
}

}  // namespace stoker::fuzz

#endif  // STOKER_TESTS_FUZZ_FUZZ_SPECS_H_
