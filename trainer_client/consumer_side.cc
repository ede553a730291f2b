#include "trainer_client/consumer_side.h"

#include <utility>

#include "common/logging.h"
#include "plan/resume_token.h"

namespace stoker {
namespace {

EpochBuffer::Config BufferConfig(const LoaderOptions& options, const v1::OpenJobResponse& job) {
  EpochBuffer::Config config;
  config.job_id = job.job_id();
  config.epochs = options.spec.epochs();
  config.batches_per_epoch = job.batches_per_epoch_per_rank();
  config.rank = options.rank;
  config.world_size = options.spec.world_size();
  config.ordered = options.ordered;
  const v1::ResumePoint& start = job.start();
  if (start.resumed()) {
    config.resumed = true;
    config.first_epoch = start.epoch();
    config.first_deal.assign(start.deal().begin(), start.deal().end());
    config.first_consumed = ConsumedBeforeResume(start);
  }
  return config;
}

}  // namespace

ConsumerSide::ConsumerSide(const LoaderOptions& options, const v1::OpenJobResponse& job,
                           absl::Time start)
    : job_id_(job.job_id()),
      rank_(options.rank),
      buffer_(BufferConfig(options, job)),
      bad_samples_(options.spec.has_max_bad_sample_fraction()
                       ? options.spec.max_bad_sample_fraction()
                       : BadSampleBudget::kDefaultFraction,
                   job.batches_per_epoch_per_rank() * options.spec.batch_size(), options.rank),
      consumption_(start) {}

ConsumerSide::Added ConsumerSide::Add(StreamId source, const Batch& batch, uint64_t wire_bytes,
                                      absl::Time received_at, absl::Time now) {
  Added added{buffer_.Add(source, batch), absl::OkStatus()};
  switch (added.result) {
    case EpochBuffer::AddResult::kAccepted:
      added.bad_samples = bad_samples_.Add(batch.header());
      ++stats_.batches_received;
      stats_.samples_received += batch.num_samples();
      stats_.bytes_received += batch.size_bytes();
      consumption_.RecordReceived(now, wire_bytes, now - received_at);
      received_report_.push_back(batch.header().task());
      break;
    case EpochBuffer::AddResult::kDuplicate:
      ++stats_.duplicates_dropped;
      break;
    case EpochBuffer::AddResult::kInvalid:
      if (++stats_.invalid_dropped <= 10) {
        STOKER_LOG(WARNING) << "dropped a batch that is not a task of job " << job_id_ << " rank "
                            << rank_ << ": " << batch.header().task().ShortDebugString()
                            << " from worker " << batch.worker_id();
      }
      break;
  }
  return added;
}

void ConsumerSide::OnNextEntered(absl::Time entered) {
  if (!last_return_.has_value()) return;
  stats_.step_seconds += absl::ToDoubleSeconds(entered - *last_return_);
  consumption_.RecordStep(entered, entered - *last_return_);
}

std::optional<Batch> ConsumerSide::Pop(StreamId* source) {
  std::optional<Batch> batch = buffer_.Pop(source);
  if (batch.has_value()) ++stats_.batches_delivered;
  return batch;
}

void ConsumerSide::OnNextReturned(absl::Time entered, absl::Time now, bool returned_batch) {
  stats_.wait_seconds += absl::ToDoubleSeconds(now - entered);
  consumption_.RecordWait(now, now - entered, returned_batch);
  last_return_ = now;
}

bool ConsumerSide::EpochOver(std::optional<uint32_t> epoch) const {
  return epoch.has_value() && !buffer_.done() && buffer_.current_epoch() > *epoch;
}

bool ConsumerSide::CanReturn(std::optional<uint32_t> epoch) const {
  return buffer_.has_ready() || buffer_.done() || EpochOver(epoch);
}

ConsumerView ConsumerSide::view() const {
  ConsumerView view;
  view.waiting = waiters_ > 0;
  view.ready = buffer_.has_ready() || buffer_.done();
  view.buffered = buffer_.buffered();
  return view;
}

std::vector<v1::TaskId> ConsumerSide::TakeReceivedReport() {
  return std::exchange(received_report_, {});
}

void ConsumerSide::RestoreReceivedReport(std::vector<v1::TaskId> reported) {
  reported.insert(reported.end(), received_report_.begin(), received_report_.end());
  received_report_ = std::move(reported);
}

std::vector<v1::TaskId> ConsumerSide::ReportOverdue(size_t max) {
  std::vector<v1::TaskId> overdue;
  if (waiters_ == 0 || buffer_.done()) return overdue;
  for (uint64_t index : buffer_.MissingInCurrentEpoch(max)) {
    v1::TaskId& task = overdue.emplace_back();
    task.set_job_id(job_id_);
    task.set_epoch(buffer_.current_epoch());
    task.set_batch_index(index);
  }
  stats_.overdue_reported += overdue.size();
  return overdue;
}

v1::ClientStats ConsumerSide::Snapshot(absl::Time now, std::optional<double> gpu_utilization) {
  if (gpu_utilization.has_value()) consumption_.RecordGpuUtilization(now, *gpu_utilization);
  return consumption_.Snapshot(now, stats_.batches_delivered);
}

}  // namespace stoker
