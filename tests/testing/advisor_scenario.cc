#include "tests/testing/advisor_scenario.h"

#include <memory>
#include <utility>

#include "common/clock.h"
#include "common/status_macros.h"
#include "trainer_client/loader.h"
#include "worker/batch_producer.h"
#include "worker/job_context.h"

namespace stoker {

namespace pb = ::stoker::v1;

pb::JobSpec AdvisorBlurJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(1'000'000);
  synthetic->set_height(64);
  synthetic->set_width(64);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  for (int i = 0; i < 20; ++i) {
    pb::GaussianBlurOp* blur = spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur();
    blur->set_ksize(11);
    blur->set_sigma(1.5);
  }
  spec.set_batch_size(kAdvisorBatchSize);
  spec.set_seed(7);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  return spec;
}

absl::StatusOr<double> MeasureProducerCapacity(const pb::JobSpec& spec) {
  ASSIGN_OR_RETURN(std::shared_ptr<JobContext> job,
                   JobContext::Create(1, spec, DatasetIo::FromEnvironment()));
  ProducerScratch scratch;
  pb::BatchMessage message;
  pb::TaskId task;
  task.set_job_id(1);
  uint64_t samples = 0;
  const absl::Duration start = ThreadCpuTime();
  while (ThreadCpuTime() - start < absl::Milliseconds(500)) {
    task.set_batch_index(samples / spec.batch_size());
    RETURN_IF_ERROR(ProduceBatch(*job, task, 1, &scratch, &message));
    samples += spec.batch_size();
  }
  return samples / absl::ToDoubleSeconds(ThreadCpuTime() - start);
}

absl::StatusOr<pb::JobStatus> ConsumeUntilAdvised(TestCluster& cluster, const std::string& job_name,
                                                  absl::Duration step) {
  LoaderOptions options;
  options.coordinator_address = cluster.coordinator_address();
  options.tls = cluster.tls_for(Role::kTrainer);
  options.job_name = job_name;
  options.spec = AdvisorBlurJob();
  options.heartbeat_interval = absl::Milliseconds(100);
  ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Open(options));
  Clock* const clock = Clock::Real();
  const absl::Time start = clock->Now();
  const absl::Time give_up = start + absl::Seconds(30);
  pb::JobStatus status;
  absl::Status error;
  while (clock->Now() < give_up) {
    absl::StatusOr<Batch> batch = loader->Next();
    if (!batch.ok()) {
      error = batch.status();
      break;
    }
    clock->SleepFor(step);
    if (clock->Now() - start < absl::Seconds(3)) continue;  // Let the windows fill.
    status = cluster.coordinator()->coordinator()->GetStatus().jobs(0);
    if (status.advice().measured()) break;
  }
  loader->Stop();
  if (!error.ok()) return error;
  return status;
}

}  // namespace stoker
