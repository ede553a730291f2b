#ifndef STOKER_TRAINER_CLIENT_TESTING_EPOCH_BUFFER_PLANS_H_
#define STOKER_TRAINER_CLIENT_TESTING_EPOCH_BUFFER_PLANS_H_

// Plans, batches and a drain helper shared by the EpochBuffer tests. Tests only.

#include <cstdint>
#include <vector>

#include "trainer_client/batch.h"
#include "trainer_client/epoch_buffer.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace testing {

inline constexpr uint64_t kPlanJob = 7;

// Task (kPlanJob or `job`, epoch, index) as a received batch.
inline Batch PlanBatch(uint32_t epoch, uint64_t index, uint64_t job = kPlanJob) {
  return Batch(MakeBatchMessage(job, epoch, index));
}

// A rank's plan: `epochs` of `per_epoch` batches, global indices k * world + rank.
inline EpochBuffer::Config Plan(uint32_t epochs, uint64_t per_epoch, uint32_t rank = 0,
                                uint32_t world = 1, bool ordered = false) {
  EpochBuffer::Config config;
  config.job_id = kPlanJob;
  config.epochs = epochs;
  config.batches_per_epoch = per_epoch;
  config.rank = rank;
  config.world_size = world;
  config.ordered = ordered;
  return config;
}

// Pops every ready batch; their global indices in hand-out order.
inline std::vector<uint64_t> PopAll(EpochBuffer& buffer) {
  std::vector<uint64_t> indices;
  while (auto batch = buffer.Pop()) indices.push_back(batch->batch_index());
  return indices;
}

}  // namespace testing
}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_TESTING_EPOCH_BUFFER_PLANS_H_
