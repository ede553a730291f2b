#include "worker/batch_producer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "augment/targets/target_codec.h"
#include "common/bad_sample.h"
#include "common/clock.h"
#include "common/counter_rng.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "worker/sample_targets.h"
#include "worker/simulated_batch.h"

namespace stoker {

namespace {

// How a sample's prefix output was had (DecodedPrefix).
struct DecodedPrefixOutcome {
  bool hit = false;
  int64_t hit_ns = 0;          // the copy out of the cache, when traced
  double prefix_seconds = 0;   // the prefix's thread CPU: a miss's, or the one a hit's entry took
  size_t entry_bytes = 0;      // the prefix's output
  bool mapped_memory = false;  // keeping it mapped a new chunk of the cache's arena
};

// Into scratch->prefix: the output of the job's deterministic prefix for sample `index`, copied
// out of `cache`, or made now from `input` (RunPrefix, its thread CPU time measured) and offered
// to the cache. The prefix's own output lives in the workspace, which RunSuffix uses: it is
// copied out either way. After a miss, scratch->prefix_op_seconds holds the prefix ops' times
// (RunSuffix zeroes them in the workspace).
absl::StatusOr<DecodedPrefixOutcome> DecodedPrefix(JobContext& job, uint64_t index,
                                                   const SampleInput& input, DecodedCache& cache,
                                                   ProducerScratch* scratch) {
  const Pipeline& pipeline = job.cache_pipeline();
  const DecodedCacheKey key{job.source().fingerprint(), index, pipeline.prefix_fingerprint()};
  const bool traced = scratch->timeline.on();
  const int64_t lookup_start = traced ? trace::MonotonicNowNanos() : 0;
  const double recorded_prefix_seconds = cache.Lookup(key, &scratch->prefix);
  const bool hit = recorded_prefix_seconds >= 0;
  job.CountDecodedLookup(hit);
  if (hit) {
    DecodedPrefixOutcome outcome;
    outcome.hit = true;
    outcome.hit_ns = traced ? trace::MonotonicNowNanos() - lookup_start : 0;
    outcome.prefix_seconds = recorded_prefix_seconds;
    outcome.entry_bytes = scratch->prefix.shape().bytes();
    return outcome;
  }
  const absl::Duration cpu_start = ThreadCpuTime();
  ImageView made;
  RETURN_IF_ERROR(pipeline.RunPrefix(input, &scratch->workspace, &made));
  DecodedPrefixOutcome outcome;
  outcome.prefix_seconds = absl::ToDoubleSeconds(ThreadCpuTime() - cpu_start);
  outcome.entry_bytes = made.shape.bytes();
  cache.Offer(key, made, outcome.prefix_seconds, job.admits_every_entry(), &outcome.mapped_memory);
  scratch->prefix.Reshape(made.shape);
  std::memcpy(scratch->prefix.view().data, made.data, made.shape.bytes());
  const std::vector<double>& seconds = scratch->workspace.op_seconds();
  scratch->prefix_op_seconds.assign(
      seconds.begin(), seconds.begin() + std::min(seconds.size(), pipeline.prefix_ops()));
  return outcome;
}

// The route of one sample: the cache's for a job that forces it, an AUTO job's probe's turn, or
// the pipeline as it runs without a cache.
DecodedCacheProbe::Turn DecodedCacheTurn(JobContext& job, DecodedCache* cache) {
  if (cache == nullptr || !job.uses_decoded_cache()) return {};
  job.JoinDecodedCacheGroup(*cache);
  DecodedCacheProbe* probe = job.decoded_cache_probe();
  if (probe == nullptr) return {DecodedCacheProbe::Route::kCached, false};
  DecodedCacheProbe::Turn turn = probe->Next();
  if (turn.reconsider) {
    const auto aligned = job.aligned_cache_group();
    const std::optional<DecodedCacheChoice> changed =
        probe->Reconsider(cache->groups().Members(job.decoded_cache_group()),
                          aligned.has_value() ? cache->groups().Members(*aligned) : 0);
    if (changed.has_value()) {
      STOKER_LOG(INFO) << "job " << job.job_id()
                       << ": decoded cache (auto) on this worker, the jobs sharing it changed: "
                       << changed->why;
      turn.route =
          changed->use ? DecodedCacheProbe::Route::kCached : DecodedCacheProbe::Route::kUncached;
    }
  }
  return turn;
}

// Gives an AUTO job's probe what a timed sample cost; logs the choice when it is made.
void RecordDecodedCacheTurn(const JobContext& job, bool cached, const DecodedPrefixOutcome& prefix,
                            double seconds, DecodedCache& cache) {
  DecodedCacheProbe& probe = *job.decoded_cache_probe();
  // A miss whose entry mapped a new chunk of the arena paid the kernel's zeroing of 2 MiB: once
  // per chunk, not per entry, so it would misstate what a miss costs.
  if (cached && prefix.mapped_memory && probe.SkipColdSample()) return;
  std::optional<DecodedCacheChoice> choice;
  if (!cached) {
    choice = probe.RecordUncached(seconds);
  } else {
    DecodedCacheProbe::CachedSample sample;
    sample.seconds = seconds;
    sample.hit = prefix.hit;
    sample.prefix_seconds = prefix.prefix_seconds;
    sample.entry_bytes = static_cast<double>(prefix.entry_bytes);
    sample.entries_fit = cache.capacity_bytes() / DecodedCache::Charge(prefix.entry_bytes);
    sample.group_members = cache.groups().Members(job.decoded_cache_group());
    if (const auto aligned = job.aligned_cache_group()) {
      sample.aligned_members = cache.groups().Members(*aligned);
      sample.aligned_window_samples = job.aligned_window_samples();
    }
    choice = probe.RecordCached(sample);
  }
  if (choice.has_value()) {
    STOKER_LOG(INFO) << "job " << job.job_id()
                     << ": decoded cache (auto) on this worker: " << choice->why;
  }
}

// Reads and augments the sample of `index` into `slot`; through `decoded_cache` (may be null)
// when the job's route for it is the cache's.
absl::Status ProduceSample(JobContext& job, uint32_t epoch, uint64_t index,
                           ProducerScratch* scratch, uint8_t* slot, DecodedCache* decoded_cache) {
  BatchTimeline& timeline = scratch->timeline;
  const int64_t read_start = timeline.on() ? trace::MonotonicNowNanos() : 0;
  RETURN_IF_ERROR(job.source().Read(index, &scratch->sample));
  CounterRng rng = SampleRng(job.spec().seed(), epoch, index);
  const DecodedCacheProbe::Turn turn = DecodedCacheTurn(job, decoded_cache);
  const absl::Duration turn_start = turn.timed ? ThreadCpuTime() : absl::ZeroDuration();
  // Labels and fields come from the source as always: only the prefix's pixels are cached.
  const bool cached = turn.route == DecodedCacheProbe::Route::kCached;
  const Pipeline& pipeline = cached ? job.cache_pipeline() : job.pipeline();
  const SampleInput input = scratch->sample.input(job.source().format());
  const int64_t run_start = timeline.on() ? trace::MonotonicNowNanos() : 0;
  DecodedPrefixOutcome prefix;
  if (cached) {
    ASSIGN_OR_RETURN(prefix, DecodedPrefix(job, index, input, *decoded_cache, scratch));
  }
  if (job.has_targets()) {
    ASSIGN_OR_RETURN(scratch->targets, ReadSampleTargets(job.fields(), scratch->sample, pipeline,
                                                         input, &scratch->workspace));
    if (cached) {
      const ImageShape canvas{scratch->targets.canvas_height, scratch->targets.canvas_width,
                              scratch->prefix.shape().channels, PixelType::kUint8};
      RETURN_IF_ERROR(pipeline.RunSuffixWithTargets(scratch->prefix.view(), canvas, &rng,
                                                    &scratch->workspace, slot, &scratch->targets));
    } else {
      RETURN_IF_ERROR(
          pipeline.RunWithTargets(input, &rng, &scratch->workspace, slot, &scratch->targets));
    }
  } else if (cached) {
    RETURN_IF_ERROR(pipeline.RunSuffix(scratch->prefix.view(), &rng, &scratch->workspace, slot));
  } else {
    RETURN_IF_ERROR(pipeline.Run(input, &rng, &scratch->workspace, slot));
  }
  if (turn.timed) {
    RecordDecodedCacheTurn(job, cached, prefix, absl::ToDoubleSeconds(ThreadCpuTime() - turn_start),
                           *decoded_cache);
  }
  std::vector<double>& seconds = scratch->workspace.mutable_op_seconds();
  if (cached && !prefix.hit && seconds.size() >= scratch->prefix_op_seconds.size()) {
    // The prefix ran: its ops' times back.
    std::copy(scratch->prefix_op_seconds.begin(), scratch->prefix_op_seconds.end(),
              seconds.begin());
  }
  if (timeline.on()) {
    const int64_t run_end = trace::MonotonicNowNanos();
    timeline.AddRead(run_start - read_start);
    timeline.AddDecodedCacheHit(prefix.hit_ns);
    timeline.AddRun(run_end - run_start - prefix.hit_ns, seconds);
  }
  if (scratch->workspace.time_ops()) {
    // After a hit the prefix ops did not run: their histograms see nothing of this sample.
    for (uint32_t op = prefix.hit ? static_cast<uint32_t>(pipeline.prefix_ops()) : 0;
         op < seconds.size(); ++op) {
      scratch->op_times.Observe(op, pipeline.op_name(op), seconds[op]);
    }
  }
  return absl::OkStatus();
}

// Produces the sample at plan position `position` into `slot`, or, when it is bad, the next good
// sample of the plan after it (positions position+1, position+2, ..., wrapping around the order).
// The bad original is counted in `header` and `counters` and logged; bad candidates are not (they
// are counted by the batch whose position they are). Returns the index of the sample produced.
absl::StatusOr<uint64_t> ProduceSampleOrReplacement(JobContext& job, const EpochPlan& plan,
                                                    uint64_t position, ProducerScratch* scratch,
                                                    uint8_t* slot, stoker::v1::BatchHeader* header,
                                                    BadSampleCounters* counters,
                                                    DecodedCache* decoded_cache) {
  const uint64_t original = plan.SampleAt(position);
  absl::Status status = ProduceSample(job, plan.epoch(), original, scratch, slot, decoded_cache);
  if (status.ok()) return original;
  const std::optional<BadSampleReason> reason = BadSampleReasonOf(status);
  if (!reason.has_value()) return status;
  const std::string reason_name(BadSampleReasonName(*reason));
  ++(*header->mutable_bad_samples())[reason_name];
  if (counters != nullptr) counters->Add(*reason);
  if (job.FirstBadSampleReport(original)) {
    STOKER_LOG(WARNING) << "bad sample " << original << " (" << job.source().Locate(original)
                        << ", " << reason_name << ") in epoch " << plan.epoch() << " of job "
                        << job.job_id() << ": " << status.message()
                        << "; replaced (logged once per worker)";
  }
  for (uint64_t attempt = 1; attempt <= kMaxReplacementAttempts; ++attempt) {
    const uint64_t candidate = plan.SampleAt(position + attempt);
    status = ProduceSample(job, plan.epoch(), candidate, scratch, slot, decoded_cache);
    if (status.ok()) return candidate;
    if (!BadSampleReasonOf(status).has_value()) return status;
  }
  return absl::DataLossError(absl::StrCat("sample ", original, " (", job.source().Locate(original),
                                          ") of epoch ", plan.epoch(), " and the ",
                                          kMaxReplacementAttempts,
                                          " samples after it in the plan are all unreadable; "
                                          "last error: ",
                                          status.message()));
}

// Starts a column per pass-through field of `job`: names set, offsets and values empty.
void StartFieldColumns(const JobContext& job, ProducerScratch* scratch,
                       stoker::v1::BatchHeader* header) {
  scratch->field_columns.resize(job.fields().size());
  for (size_t f = 0; f < job.fields().size(); ++f) {
    scratch->field_columns[f].clear();  // Keeps capacity.
    stoker::v1::FieldColumn* column = header->add_fields();
    column->set_name(job.fields()[f]);
    column->add_offsets(0);
  }
}

// Appends the values of the sample just produced to the columns (offsets relative to each
// column's start for now): a pass-through value as read, a typed target as moved to the output
// image (scratch->targets), in its wire form.
void AddSampleFields(const JobContext& job, ProducerScratch* scratch,
                     stoker::v1::BatchHeader* header) {
  const SampleBuffer& sample = scratch->sample;
  for (size_t f = 0; f < scratch->field_columns.size(); ++f) {
    std::string& column = scratch->field_columns[f];
    if (IsTargetField(job.fields()[f])) {
      AppendWireTarget(job.fields()[f], scratch->targets, &column);
    } else {
      column.append(reinterpret_cast<const char*>(sample.fields[f].data()),
                    sample.fields[f].size());
    }
    header->mutable_fields(static_cast<int>(f))->add_offsets(column.size());
  }
}

// Appends the columns to the payload after the tensor and makes their offsets payload offsets.
void FinishFieldColumns(const ProducerScratch& scratch, stoker::v1::BatchHeader* header,
                        std::string* data) {
  for (size_t f = 0; f < scratch.field_columns.size(); ++f) {
    const uint64_t base = data->size();
    for (uint64_t& offset : *header->mutable_fields(static_cast<int>(f))->mutable_offsets()) {
      offset += base;
    }
    data->append(scratch.field_columns[f]);
  }
}

}  // namespace

void StartBatchHeader(const JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                      stoker::v1::BatchHeader* header) {
  const Pipeline& pipeline = job.pipeline();
  const uint32_t batch_size = job.spec().batch_size();
  *header->mutable_task() = task;
  header->mutable_sample_indices()->Resize(static_cast<int>(batch_size), 0);
  header->mutable_labels()->Resize(static_cast<int>(batch_size), 0);
  header->clear_bad_samples();
  header->clear_soft_labels();
  header->clear_fields();
  header->clear_shape();
  for (int64_t dim : pipeline.BatchShape(batch_size)) header->add_shape(dim);
  header->set_dtype(pipeline.output_dtype());
  header->set_layout(pipeline.output_layout());
  header->set_compression(stoker::v1::COMPRESSION_NONE);
  header->set_worker_id(worker_id);
  header->set_produce_seconds(0);
  header->clear_trace();
}

absl::Status ProduceBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                          ProducerScratch* scratch, stoker::v1::BatchMessage* out,
                          BadSampleCounters* bad_sample_counters, DecodedCache* decoded_cache) {
  ASSIGN_OR_RETURN(std::shared_ptr<const EpochPlan> plan, job.Plan(task.epoch()));
  const Pipeline& pipeline = job.pipeline();
  const uint32_t batch_size = job.spec().batch_size();
  RETURN_IF_ERROR(plan->CheckBatch(task.batch_index()));

  stoker::v1::BatchHeader* header = out->mutable_header();
  StartBatchHeader(job, task, worker_id, header);

  const size_t sample_bytes = pipeline.output_bytes_per_sample();
  std::string* data = out->mutable_data();
  data->resize(sample_bytes * batch_size);  // Keeps the pooled capacity: no page faults.
  uint8_t* slot = reinterpret_cast<uint8_t*>(data->data());
  const uint64_t first_position = task.batch_index() * batch_size;
  StartFieldColumns(job, scratch, header);
  for (uint32_t i = 0; i < batch_size; ++i, slot += sample_bytes) {
    ASSIGN_OR_RETURN(uint64_t index,
                     ProduceSampleOrReplacement(job, *plan, first_position + i, scratch, slot,
                                                header, bad_sample_counters, decoded_cache));
    header->set_sample_indices(static_cast<int>(i), index);
    header->set_labels(static_cast<int>(i), scratch->sample.label);
    AddSampleFields(job, scratch, header);
  }
  if (const BatchMix* mix = pipeline.batch_mix(); mix != nullptr) {
    const int64_t mix_start = scratch->timeline.on() ? trace::MonotonicNowNanos() : 0;
    CounterRng rng = BatchRng(job.spec().seed(), task.epoch(), task.batch_index());
    header->mutable_soft_labels()->Resize(static_cast<int>(batch_size * mix->num_classes()), 0.0f);
    const auto& labels = header->labels();
    RETURN_IF_ERROR(mix->Apply(mix->Draw(&rng), reinterpret_cast<uint8_t*>(data->data()),
                               absl::MakeConstSpan(labels.data(), labels.size()),
                               &scratch->workspace.scratch(),
                               header->mutable_soft_labels()->mutable_data()));
    if (scratch->timeline.on()) scratch->timeline.AddTail(trace::MonotonicNowNanos() - mix_start);
  }
  FinishFieldColumns(*scratch, header, data);
  return absl::OkStatus();
}

BatchProducer::BatchProducer(uint32_t threads, uint64_t worker_id, MessagePool* pool, Clock* clock,
                             uint32_t process_cpus, DecodedCache* decoded_cache)
    : pool_(pool),
      clock_(clock),
      decoded_cache_(decoded_cache),
      capacity_(kQueuedPerThread * std::max<uint32_t>(threads, 1)),
      worker_id_(worker_id),
      recent_(clock->Now(), std::max<uint32_t>(threads, 1), process_cpus) {
  for (uint32_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

BatchProducer::~BatchProducer() { Stop(); }

void BatchProducer::set_worker_id(uint64_t worker_id) {
  absl::MutexLock lock(&mu_);
  worker_id_ = worker_id;
}

void BatchProducer::set_simulation(std::optional<SimulatedProduction> simulation) {
  absl::MutexLock lock(&mu_);
  simulation_ = simulation;
}

void BatchProducer::Submit(std::shared_ptr<JobContext> job, stoker::v1::TaskId task, Done done,
                           LeaseStart lease) {
  absl::Status refused;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && queue_.size() < capacity_) {
      auto share = tenant_shares_.find(job->tenant());
      fair_.Add(job->tenant(), job->job_id(),
                share == tenant_shares_.end() ? TenantShare{}.weight : share->second.weight);
      queue_.push_back(Work{std::move(job), std::move(task), std::move(done), lease});
      return;
    }
    refused = stopping_ ? absl::CancelledError("worker is stopping")
                        : absl::ResourceExhaustedError(absl::StrCat(
                              "the worker's producer queue is full (", capacity_, " tasks)"));
  }
  done(refused, nullptr);
}

size_t BatchProducer::room() const {
  absl::MutexLock lock(&mu_);
  return capacity_ - std::min(capacity_, queue_.size());
}

size_t BatchProducer::queued_of_job(uint64_t job_id) const {
  absl::MutexLock lock(&mu_);
  return fair_.queued_of_job(job_id);
}

void BatchProducer::SetTenantShares(absl::flat_hash_map<std::string, TenantShare> shares) {
  absl::MutexLock lock(&mu_);
  tenant_shares_.swap(shares);
}

TenantShare BatchProducer::tenant_share(absl::string_view tenant) const {
  absl::MutexLock lock(&mu_);
  auto it = tenant_shares_.find(tenant);
  return it == tenant_shares_.end() ? TenantShare{} : it->second;
}

absl::flat_hash_map<std::string, TenantShare> BatchProducer::tenant_shares() const {
  absl::MutexLock lock(&mu_);
  return tenant_shares_;
}

absl::flat_hash_map<std::string, double> BatchProducer::tenant_busy_seconds() const {
  absl::MutexLock lock(&mu_);
  return tenant_busy_seconds_;
}

void BatchProducer::Stop() {
  std::deque<Work> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    dropped.swap(queue_);
    fair_.Clear();
  }
  for (Work& work : dropped) work.done(absl::CancelledError("worker is stopping"), nullptr);
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void BatchProducer::Loop() {
  ProducerScratch scratch;
  scratch.workspace.set_time_ops(true);
  absl::Time simulated_ready = absl::InfinitePast();  // the last simulated batch's ready time
  while (true) {
    Work work;
    TenantFairQueue::Turn turn;
    uint64_t worker_id;
    std::optional<SimulatedProduction> simulated;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // Stopping.
      work = TakeLocked(&turn);
      worker_id = worker_id_;
      simulated = simulation_;
    }
    const absl::Time wall_start = clock_->Now();
    if (work.job->retired()) {
      work.done(absl::CancelledError("the job was retired"), nullptr);
      absl::MutexLock lock(&mu_);
      ChargeLocked(work, turn, absl::ZeroDuration());
      continue;
    }
    std::unique_ptr<stoker::v1::BatchMessage> message = pool_->Get();
    const absl::Duration cpu_start = ThreadCpuTime();
    const absl::Status status =
        simulated.has_value()
            ? Simulate(*simulated, work, worker_id, cpu_start, &simulated_ready, message.get())
            : Produce(work, worker_id, &scratch, message.get());
    if (status.ok()) {
      absl::MutexLock lock(&mu_);
      ++batches_produced_;
      samples_produced_ += work.job->spec().batch_size();
      op_times_.MergeFrom(scratch.op_times);
    } else {
      pool_->Put(std::move(message));
    }
    work.done(status, status.ok() ? std::move(message) : nullptr);
    // After `done`: handing the batch on (encoding it, often sending it) is part of its cost.
    const absl::Time handed_on = clock_->Now();
    const TaskTime time{ThreadCpuTime() - cpu_start, handed_on - wall_start};
    absl::MutexLock lock(&mu_);
    ChargeLocked(work, turn, time.wall);
    if (status.ok()) {
      recent_.Record(handed_on, work.job->job_id(), time, work.job->spec().batch_size());
    }
  }
}

BatchProducer::Work BatchProducer::TakeLocked(TenantFairQueue::Turn* turn) {
  *turn = *fair_.Next();
  // The first queued task of the chosen job: a job's tasks keep their order.
  auto it = std::find_if(queue_.begin(), queue_.end(),
                         [turn](const Work& w) { return w.job->job_id() == turn->job_id; });
  Work work = std::move(*it);
  queue_.erase(it);
  return work;
}

void BatchProducer::ChargeLocked(const Work& work, const TenantFairQueue::Turn& turn,
                                 absl::Duration cost) {
  fair_.Done(turn, cost);
  const std::string& tenant = work.job->tenant();
  auto it = tenant_busy_seconds_.find(tenant);
  if (it == tenant_busy_seconds_.end()) it = tenant_busy_seconds_.emplace(tenant, 0.0).first;
  it->second += absl::ToDoubleSeconds(cost);
}

absl::Status BatchProducer::Produce(const Work& work, uint64_t worker_id, ProducerScratch* scratch,
                                    stoker::v1::BatchMessage* out) {
  scratch->timeline.Begin(work.job->trace(), work.task, work.lease);
  const absl::Time start = clock_->Now();
  RETURN_IF_ERROR(
      ProduceBatch(*work.job, work.task, worker_id, scratch, out, &bad_samples_, decoded_cache_));
  out->mutable_header()->set_produce_seconds(absl::ToDoubleSeconds(clock_->Now() - start));
  scratch->timeline.End(work.job->trace(), work.job->pipeline(), out->mutable_header());
  return absl::OkStatus();
}

absl::Status BatchProducer::Simulate(const SimulatedProduction& simulation, const Work& work,
                                     uint64_t worker_id, absl::Duration cpu_start,
                                     absl::Time* last_ready, stoker::v1::BatchMessage* out) {
  // A fixed rate while busy: each batch is ready one period after the later of the last one's
  // ready time and the moment this task was taken (or when its CPU burn ends, if later).
  const absl::Time ready = std::max(clock_->Now(), *last_ready) + simulation.period;
  RETURN_IF_ERROR(SimulateBatch(*work.job, work.task, worker_id, out));
  *last_ready = ready;
  if (simulation.mode == SimulatedBatchMode::kBurn) {
    BurnThreadCpu(simulation.cpu, cpu_start, out->mutable_data());
  }
  absl::MutexLock lock(&mu_);  // sleeps until `ready`; Stop() wakes it
  clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopping_), ready);
  return absl::OkStatus();
}

OpTimeHistograms BatchProducer::op_times() const {
  absl::MutexLock lock(&mu_);
  return op_times_;
}

void BatchProducer::RecordProcessCpu() {
  absl::MutexLock lock(&mu_);
  recent_.RecordProcessCpu(clock_->Now(), ProcessCpuTime());
}

void BatchProducer::ReportRecent(stoker::v1::WorkerStats* stats) const {
  absl::MutexLock lock(&mu_);
  recent_.Report(clock_->Now(), stats);
}

uint64_t BatchProducer::batches_produced() const {
  absl::MutexLock lock(&mu_);
  return batches_produced_;
}

uint64_t BatchProducer::samples_produced() const {
  absl::MutexLock lock(&mu_);
  return samples_produced_;
}

}  // namespace stoker
