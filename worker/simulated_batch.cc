#include "worker/simulated_batch.h"

#include <memory>
#include <string>

#include "common/status_macros.h"

namespace stoker {

absl::Status SimulateBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                           stoker::v1::BatchMessage* out) {
  ASSIGN_OR_RETURN(std::shared_ptr<const EpochPlan> plan, job.Plan(task.epoch()));
  RETURN_IF_ERROR(plan->CheckBatch(task.batch_index()));
  const Pipeline& pipeline = job.pipeline();
  const uint32_t batch_size = job.spec().batch_size();
  stoker::v1::BatchHeader* header = out->mutable_header();
  *header->mutable_task() = task;
  header->mutable_sample_indices()->Resize(static_cast<int>(batch_size), 0);
  header->mutable_labels()->Resize(static_cast<int>(batch_size), 0);
  const uint64_t first_position = task.batch_index() * batch_size;
  for (uint32_t i = 0; i < batch_size; ++i) {
    header->set_sample_indices(static_cast<int>(i), plan->SampleAt(first_position + i));
  }
  header->clear_bad_samples();
  header->clear_shape();
  for (int64_t dim : pipeline.BatchShape(batch_size)) header->add_shape(dim);
  header->set_dtype(pipeline.output_dtype());
  header->set_layout(pipeline.output_layout());
  header->set_compression(stoker::v1::COMPRESSION_NONE);
  header->set_worker_id(worker_id);
  header->set_produce_seconds(0);
  out->mutable_data()->resize(job.batch_bytes());  // keeps the pooled capacity
  return absl::OkStatus();
}

}  // namespace stoker
