#include "worker/simulated_batch.h"

#include <memory>
#include <string>

#include "common/status_macros.h"
#include "worker/batch_producer.h"

namespace stoker {

absl::Status SimulateBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                           stoker::v1::BatchMessage* out) {
  ASSIGN_OR_RETURN(std::shared_ptr<const EpochPlan> plan, job.Plan(task.epoch()));
  RETURN_IF_ERROR(plan->CheckBatch(task.batch_index()));
  const uint32_t batch_size = job.spec().batch_size();
  stoker::v1::BatchHeader* header = out->mutable_header();
  StartBatchHeader(job, task, worker_id, header);
  const uint64_t first_position = task.batch_index() * batch_size;
  for (uint32_t i = 0; i < batch_size; ++i) {
    header->set_sample_indices(static_cast<int>(i), plan->SampleAt(first_position + i));
  }
  header->set_produce_seconds(0);
  out->mutable_data()->resize(job.batch_bytes());  // keeps the pooled capacity
  return absl::OkStatus();
}

}  // namespace stoker
