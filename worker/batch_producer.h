#ifndef STOKER_WORKER_BATCH_PRODUCER_H_
#define STOKER_WORKER_BATCH_PRODUCER_H_

// Turns tasks into batches on a pool of threads, one per core by default. Each thread owns its
// scratch (source image, pipeline workspace), and batch messages come from a pool, so steady-state
// production allocates nothing per image.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "augment/pipeline.h"
#include "augment/targets/targets.h"
#include "common/clock.h"
#include "stoker/v1/worker.pb.h"
#include "wire/message_pool.h"
#include "worker/bad_sample_counters.h"
#include "worker/batch_timeline.h"
#include "worker/decoded_cache.h"
#include "worker/job_context.h"
#include "worker/op_time_histograms.h"
#include "worker/production_window.h"
#include "worker/simulated_batch.h"
#include "worker/tenant_fair_queue.h"

namespace stoker {

// Per-thread scratch for ProduceBatch. Thread-compatible.
struct ProducerScratch {
  SampleBuffer sample;
  // The batch's field values, one column per field, gathered sample by sample and appended to
  // the payload after the tensor.
  std::vector<std::string> field_columns;
  // The typed targets of the sample just produced, moved to its output image (jobs with
  // JobContext::has_targets).
  SampleTargets targets;
  PipelineWorkspace workspace;
  // The job's deterministic prefix output for the sample (jobs that use the decoded cache):
  // copied out of the cache, or out of the workspace after RunPrefix.
  ImageBuffer prefix;
  // The prefix ops' times of the last sample whose prefix ran (op_times and the timeline).
  std::vector<double> prefix_op_seconds;
  // Filled per sample when workspace.time_ops() is on.
  OpTimeHistograms op_times;
  // The stage times of a sampled batch (off otherwise).
  BatchTimeline timeline;
};

// Consecutive bad samples after a bad one that ProduceBatch tries before failing the batch.
inline constexpr uint64_t kMaxReplacementAttempts = 1000;

// The header every batch of `task` starts with, for ProduceBatch and SimulateBatch: the task,
// batch_size sample-index and label slots (zero), no bad samples, the pipeline's batch shape,
// dtype and layout, no compression, no field columns, the worker id, no production time.
void StartBatchHeader(const JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                      stoker::v1::BatchHeader* header);

// Fills `out` (header and payload) with batch `task` of `job`. Reuses out's storage. Reads no
// clock: header.produce_seconds is the BatchProducer's to set.
//
// Bad samples (docs/architecture.md, Bad input): when the source or the pipeline fails a sample
// with a bad-sample error (common/bad_sample.h), the sample at that plan position is replaced by
// the next good sample of the plan after it (position p+1, p+2, ..., wrapping around the epoch's
// order), so the batch keeps its size and every rank its count; the replacement is augmented with
// its own per-sample RNG. The bad sample is logged with Source::Locate and its reason (once per
// worker and job), and counted (each time) in `bad_sample_counters` (may be null) and in
// header.bad_samples, from which the client enforces
// the job's error-rate limit.
//
// With `decoded_cache` (may be null) and a job that uses it (JobContext::uses_decoded_cache),
// each sample's prefix output comes from the cache when it is there and is offered to it when
// made (DecodedCache::Offer), and only the pipeline's suffix runs on it: the same bytes as
// without the cache (docs/decisions/0081-decoded-cache.md).
//
// With fields (JobContext::fields), each produced sample's values (the replacement's, for a bad
// sample) go after the tensor, column by column, described by header.fields; a non-empty
// FieldColumn.offsets always has batch_size + 1 entries. Typed targets (JobContext::has_targets)
// are decoded from the sample's stored values (worker/sample_targets.h; a bad annotation or too
// many instances is a bad sample like any other), moved with the image by
// Pipeline::RunWithTargets, and carried in their wire form (augment/targets/target_codec.h).
//
// With the pipeline's batch_mix (MixUp/CutMix), the batch is mixed after its last sample, drawing
// from BatchRng(seed, epoch, batch index) (augment/batch_mix.h), and header.soft_labels is set.
//
// Errors: OUT_OF_RANGE for a task past the plan; DATA_LOSS when kMaxReplacementAttempts samples
// in a row after a bad one are bad too; INVALID_ARGUMENT when batch_mix meets a label outside
// [0, num_classes); other errors of the source or the pipeline.
absl::Status ProduceBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                          ProducerScratch* scratch, stoker::v1::BatchMessage* out,
                          BadSampleCounters* bad_sample_counters = nullptr,
                          DecodedCache* decoded_cache = nullptr);

// What one tenant may use of a worker (WorkerHeartbeatResponse.tenants).
struct TenantShare {
  // Its weight in the fair share of producer time; > 0.
  double weight = 1;
  // Bytes its streams may hold here together; 0: no quota.
  uint64_t max_prefetch_bytes = 0;
};

// Thread-safe. Stop() (or the destructor) finishes queued work it has started and drops the rest,
// calling their callbacks with CANCELLED. The queue is bounded (capacity()): Submit beyond it
// fails the task with RESOURCE_EXHAUSTED, so callers lease no more than room(). Work of a
// retired job (JobContext::Retire) is dropped with CANCELLED when its turn comes. Threads take
// queued tasks in weighted fair order between the jobs' tenants (worker/tenant_fair_queue.h).
class BatchProducer {
 public:
  using Done = std::function<void(absl::Status, std::unique_ptr<stoker::v1::BatchMessage>)>;

  // `clock` times production (header.produce_seconds, the recent fractions and rates) and paces
  // simulated batches. `process_cpus`: the CPUs of the worker's own process, for its
  // process_cpu_fraction (0: the process is shared, not reported; worker/production_window.h).
  // `decoded_cache` (may be null; must outlive the producer): the worker's decoded cache.
  BatchProducer(uint32_t threads, uint64_t worker_id, MessagePool* pool, Clock* clock,
                uint32_t process_cpus = 0, DecodedCache* decoded_cache = nullptr);
  ~BatchProducer();

  void set_worker_id(uint64_t worker_id);
  // Bench/test facility (worker/simulated_batch.h): simulate production, each batch ready
  // `period` after its thread took the task, its thread sleeping or burning CPU meanwhile.
  // nullopt: real production (the default).
  void set_simulation(std::optional<SimulatedProduction> simulation);
  // Queues a task; `done` runs on a producer thread with the finished message (or an error).
  // `lease`: when its lease was asked for, for a traced batch's lease_wait span.
  void Submit(std::shared_ptr<JobContext> job, stoker::v1::TaskId task, Done done,
              LeaseStart lease = {});
  // Most tasks queued at once: kQueuedPerThread per producer thread.
  static constexpr size_t kQueuedPerThread = 64;
  size_t capacity() const { return capacity_; }
  // Tasks that may be submitted now without exceeding the capacity.
  size_t room() const;
  // Tasks of job `job_id` queued and not yet taken by a thread.
  size_t queued_of_job(uint64_t job_id) const;
  void Stop();

  // Replaces the tenants' shares (the coordinator's, each heartbeat); a tenant not in `shares`
  // has TenantShare{}.
  void SetTenantShares(absl::flat_hash_map<std::string, TenantShare> shares);
  TenantShare tenant_share(absl::string_view tenant) const;
  // The current shares, by tenant (for metrics).
  absl::flat_hash_map<std::string, TenantShare> tenant_shares() const;
  // Producer time (wall, from taking a task to handing its batch on) spent on each tenant's
  // tasks since the start, by tenant.
  absl::flat_hash_map<std::string, double> tenant_busy_seconds() const;

  // Per-op time histograms of every batch produced so far.
  OpTimeHistograms op_times() const;
  // Reads the process's CPU time for process_cpu_fraction (call it regularly: each heartbeat).
  void RecordProcessCpu();
  // Sets stats' busy, occupied and process CPU fractions and job_rates from the last ~10
  // seconds (worker/production_window.h).
  void ReportRecent(stoker::v1::WorkerStats* stats) const;
  uint64_t batches_produced() const;
  uint64_t samples_produced() const;
  // Bad samples met by this producer's threads, by reason.
  const BadSampleCounters& bad_samples() const { return bad_samples_; }

 private:
  struct Work {
    std::shared_ptr<JobContext> job;
    stoker::v1::TaskId task;
    Done done;
    LeaseStart lease;
  };
  void Loop();
  // Takes the next task in fair order. REQUIRES: the queue is not empty.
  Work TakeLocked(TenantFairQueue::Turn* turn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Charges `cost` of producer time to `work`'s tenant, taken as `turn`.
  void ChargeLocked(const Work& work, const TenantFairQueue::Turn& turn, absl::Duration cost)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ProduceBatch for `work`, timed into header.produce_seconds, with its timeline when traced.
  absl::Status Produce(const Work& work, uint64_t worker_id, ProducerScratch* scratch,
                       stoker::v1::BatchMessage* out);
  // SimulateBatch for `work`, then the simulation's CPU burn and its wait until one period after
  // the later of now and *last_ready (which it advances); Stop() cuts the wait short.
  absl::Status Simulate(const SimulatedProduction& simulation, const Work& work, uint64_t worker_id,
                        absl::Duration cpu_start, absl::Time* last_ready,
                        stoker::v1::BatchMessage* out);

  MessagePool* const pool_;
  Clock* const clock_;
  DecodedCache* const decoded_cache_;
  const size_t capacity_;
  BadSampleCounters bad_samples_;
  mutable absl::Mutex mu_;
  std::deque<Work> queue_ ABSL_GUARDED_BY(mu_);
  TenantFairQueue fair_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, TenantShare> tenant_shares_ ABSL_GUARDED_BY(mu_);
  // Grows by tenant seen: tenants are named by their certificates, which operators issue.
  absl::flat_hash_map<std::string, double> tenant_busy_seconds_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t worker_id_ ABSL_GUARDED_BY(mu_);
  std::optional<SimulatedProduction> simulation_ ABSL_GUARDED_BY(mu_);
  uint64_t batches_produced_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t samples_produced_ ABSL_GUARDED_BY(mu_) = 0;
  ProductionWindow recent_ ABSL_GUARDED_BY(mu_);
  OpTimeHistograms op_times_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_BATCH_PRODUCER_H_
