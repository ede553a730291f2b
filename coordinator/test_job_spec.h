#ifndef STOKER_COORDINATOR_TEST_JOB_SPEC_H_
#define STOKER_COORDINATOR_TEST_JOB_SPEC_H_

// A small valid JobSpec for coordinator tests: 40 synthetic 8×8×3 images, to_float, batch 4,
// no shuffle, so 10 global batches per epoch and 10 / world_size per rank. Tests only.

#include <cstdint>

#include "stoker/v1/pipeline.pb.h"

namespace stoker {

inline stoker::v1::JobSpec SmallJobSpec(uint32_t world_size = 2, uint32_t epochs = 2) {
  stoker::v1::JobSpec spec;
  stoker::v1::SyntheticSource* source = spec.mutable_dataset()->mutable_synthetic();
  source->set_num_samples(40);
  source->set_height(8);
  source->set_width(8);
  source->set_channels(3);
  source->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(4);
  spec.set_seed(7);
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_NONE);
  spec.set_world_size(world_size);
  spec.set_epochs(epochs);
  spec.set_drop_last(true);
  return spec;
}

}  // namespace stoker

#endif  // STOKER_COORDINATOR_TEST_JOB_SPEC_H_
