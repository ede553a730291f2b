#ifndef STOKER_WORKER_TASK_ID_FOR_TEST_H_
#define STOKER_WORKER_TASK_ID_FOR_TEST_H_

// For the worker's tests: the id of batch `batch_index` of job `job_id` in epoch `epoch`.

#include <cstdint>

#include "stoker/v1/common.pb.h"

namespace stoker::worker_testing {

inline v1::TaskId TaskOf(uint64_t job_id, uint32_t epoch, uint64_t batch_index) {
  v1::TaskId task;
  task.set_job_id(job_id);
  task.set_epoch(epoch);
  task.set_batch_index(batch_index);
  return task;
}

}  // namespace stoker::worker_testing

#endif  // STOKER_WORKER_TASK_ID_FOR_TEST_H_
