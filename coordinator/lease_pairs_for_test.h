#ifndef STOKER_COORDINATOR_LEASE_PAIRS_FOR_TEST_H_
#define STOKER_COORDINATOR_LEASE_PAIRS_FOR_TEST_H_

// Leases and task lists as (epoch, batch index) pairs, for the coordinator tests' expectations.

#include <cstdint>
#include <utility>
#include <vector>

#include "stoker/v1/coordinator.pb.h"

namespace stoker {

using EpochBatch = std::pair<uint32_t, uint64_t>;

inline std::vector<EpochBatch> Pairs(const v1::LeaseTasksResponse& response) {
  std::vector<EpochBatch> out;
  for (const auto& lease : response.leases()) {
    out.emplace_back(lease.task().epoch(), lease.task().batch_index());
  }
  return out;
}

// Any sequence of TaskId: a repeated proto field, a std::vector.
template <typename TaskIds>
std::vector<EpochBatch> Pairs(const TaskIds& tasks) {
  std::vector<EpochBatch> out;
  for (const v1::TaskId& task : tasks) out.emplace_back(task.epoch(), task.batch_index());
  return out;
}

}  // namespace stoker

#endif  // STOKER_COORDINATOR_LEASE_PAIRS_FOR_TEST_H_
