#ifndef STOKER_WORKER_SMALL_BLUR_JOB_FOR_TEST_H_
#define STOKER_WORKER_SMALL_BLUR_JOB_FOR_TEST_H_

// The worker tests' small synthetic job: 40 images of 16x12x3, to_float, a 5x5 blur and a flip
// to CHW, batches of 4 (10 per epoch, dealt over `world_size` ranks).

#include <cstdint>

#include "stoker/v1/pipeline.pb.h"

namespace stoker {

inline v1::JobSpec SmallBlurJobForTest(uint32_t world_size, uint32_t epochs) {
  v1::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(40);
  synthetic->set_height(16);
  synthetic->set_width(12);
  synthetic->set_channels(3);
  synthetic->set_num_classes(7);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur()->set_ksize(5);
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->set_output_layout(v1::LAYOUT_CHW);
  spec.set_batch_size(4);
  spec.set_seed(11);
  spec.set_shuffle(v1::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(world_size);
  spec.set_epochs(epochs);
  spec.set_drop_last(true);
  return spec;
}

}  // namespace stoker

#endif  // STOKER_WORKER_SMALL_BLUR_JOB_FOR_TEST_H_
