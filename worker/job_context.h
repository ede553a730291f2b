#ifndef STOKER_WORKER_JOB_CONTEXT_H_
#define STOKER_WORKER_JOB_CONTEXT_H_

// What a worker needs to produce any batch of one job: the spec, the opened source, the compiled
// pipeline and the epoch plans (computed on first use, the two most recent kept).

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "augment/pipeline.h"
#include "common/field_limits.h"
#include "common/tls/principal.h"
#include "data/source.h"
#include "plan/epoch_plan.h"
#include "stoker/v1/pipeline.pb.h"
#include "trace/span_recorder.h"
#include "worker/decoded_cache.h"
#include "worker/decoded_cache_probe.h"

namespace stoker {

// How a job uses a worker's decoded cache (JobSpec.decoded_cache; docs/decisions/
// 0084-decoded-cache-chosen-from-measured-costs.md).
enum class DecodedCacheMode {
  kOff,     // OFF
  kForced,  // ON or ALWAYS: every sample takes the cache route, and Run runs unfused
  kAuto,    // AUTO or unset: each worker with a cache chooses (worker/decoded_cache_probe.h)
};
DecodedCacheMode DecodedCacheModeOf(const stoker::v1::JobSpec& spec);

// Thread-safe.
class JobContext {
 public:
  // Opens the job's dataset through `io` (CreateSource, data/source.h). INVALID_ARGUMENT when
  // the spec does not describe a usable job (its fields included: CheckJobFields,
  // data/source.h; a job naming typed targets with a pipeline that cannot move them, naming the
  // op: Pipeline::Compile with_targets); the source's errors when its data cannot be read.
  // `tenant`: who owns the job (GetJobResponse.tenant); only its trainers may stream it.
  static absl::StatusOr<std::shared_ptr<JobContext>> Create(
      uint64_t job_id, const stoker::v1::JobSpec& spec, const DatasetIo& io,
      std::string tenant = std::string(kDefaultTenant));
  // The same with the source already opened (tests inject sources with bad samples).
  static absl::StatusOr<std::shared_ptr<JobContext>> Create(
      uint64_t job_id, const stoker::v1::JobSpec& spec, std::unique_ptr<Source> source,
      std::string tenant = std::string(kDefaultTenant));

  uint64_t job_id() const { return job_id_; }
  const std::string& tenant() const { return tenant_; }
  const stoker::v1::JobSpec& spec() const { return spec_; }
  const Source& source() const { return *source_; }
  // The pipeline as it runs without the decoded cache: Run (and RunWithTargets).
  const Pipeline& pipeline() const { return pipeline_; }
  // The fields every batch carries as columns (SourceFields, data/sample_fields.h: pass-through
  // fields and typed targets): the source fills them in SampleBuffer.fields, in this order.
  const std::vector<std::string>& fields() const { return fields_; }
  // True when the job names a typed target (common/target_fields.h): its pipeline was compiled
  // with_targets and each sample runs with its targets (worker/sample_targets.h).
  bool has_targets() const { return pipeline_.with_targets(); }
  // The job may take the cache route on a worker with a decoded cache: its pipeline has a
  // deterministic prefix, the source a fingerprint, and either the job forces the cache (its one
  // pipeline was compiled decoded_prefix, so its batches are the same bytes with or without a
  // cache) or it is AUTO and the pipeline's Run gives the bytes of RunPrefix then RunSuffix (no
  // decode at a DCT scale: Pipeline::may_decode_window_downscaled), so either route gives the
  // same batches. Otherwise it runs whole, as any job.
  bool uses_decoded_cache() const { return cache_pipeline_ != nullptr; }
  // The pipeline of the cache route (RunPrefix, RunSuffix). REQUIRES: uses_decoded_cache().
  const Pipeline& cache_pipeline() const { return *cache_pipeline_; }
  // An AUTO job's choice on this worker; null for the others.
  DecodedCacheProbe* decoded_cache_probe() const { return probe_.get(); }
  // The group of jobs that may read this job's entries. REQUIRES: uses_decoded_cache().
  DecodedCacheGroups::Key decoded_cache_group() const {
    return {source_->fingerprint(), cache_pipeline_->prefix_fingerprint()};
  }
  // With JobSpec.sweep_seed (decision 0087): the group of those jobs that also read the same
  // blocks or shard windows in step (same sweep seed, shuffle and window), and the samples of one
  // such block or window; nullopt and 0 without. REQUIRES: uses_decoded_cache().
  std::optional<DecodedCacheGroups::Key> aligned_cache_group() const;
  uint64_t aligned_window_samples() const;
  // The first call makes the job a member of its groups in `cache` until the job is dropped.
  // REQUIRES: uses_decoded_cache().
  void JoinDecodedCacheGroup(DecodedCache& cache);
  // Every prefix output is offered as worth keeping: DECODED_CACHE_ALWAYS, or an AUTO job whose
  // probe chose the cache on this worker (the choice weighed the prefix's average CPU per byte
  // against the admission threshold already; entry by entry, the cheaper decodes would be left
  // out, each a full miss in every pass).
  bool admits_every_entry() const {
    return spec_.decoded_cache() == stoker::v1::DECODED_CACHE_ALWAYS ||
           (probe_ != nullptr && probe_->chose_cache());
  }
  // This job's lookups in this worker's decoded cache (its per-job metrics).
  void CountDecodedLookup(bool hit) {
    (hit ? decoded_hits_ : decoded_misses_).fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t decoded_hits() const { return decoded_hits_.load(std::memory_order_relaxed); }
  uint64_t decoded_misses() const { return decoded_misses_.load(std::memory_order_relaxed); }
  // Payload bytes of one batch's tensor.
  size_t batch_bytes() const { return pipeline_.output_bytes_per_sample() * spec_.batch_size(); }
  // The most bytes one batch can hold: the tensor, and the field columns at their largest
  // (MaxFieldColumnBytes, common/field_limits.h: a pass-through value at kMaxFieldValueBytes, a
  // typed target at its wire bound for the output image). What the worker counts against
  // --memory-bytes.
  uint64_t max_batch_bytes() const {
    const ImageShape& image = pipeline_.result_shape();
    return batch_bytes() +
           MaxFieldColumnBytes(spec_.batch_size(), fields_, uint64_t{image.height} * image.width);
  }

  // True the first time it is asked about sample `index`: bad samples are logged once per worker,
  // not once per epoch. Remembers up to kMaxRememberedBadSamples indices; past that, always true.
  bool FirstBadSampleReport(uint64_t index);
  static constexpr size_t kMaxRememberedBadSamples = size_t{1} << 16;

  // The plan of `epoch`. INVALID_ARGUMENT when the epoch is past the job's epochs.
  absl::StatusOr<std::shared_ptr<const EpochPlan>> Plan(uint32_t epoch);

  // The coordinator retired the job: work still queued for it is dropped, not produced.
  void Retire() { retired_.store(true, std::memory_order_relaxed); }
  bool retired() const { return retired_.load(std::memory_order_relaxed); }

  // Batch timelines (worker/batch_timeline.h): the job's sampling, as the coordinator's heartbeat
  // responses set it (0 while not traced), and the op and thread names of its spans. Spans go
  // into batch headers, not into this recorder's ring.
  trace::SpanRecorder& trace() { return trace_; }

 private:
  JobContext(uint64_t job_id, std::string tenant, stoker::v1::JobSpec spec,
             std::unique_ptr<Source> source, Pipeline pipeline,
             std::optional<Pipeline> auto_cache_pipeline, std::vector<std::string> fields);

  const uint64_t job_id_;
  const std::string tenant_;
  const stoker::v1::JobSpec spec_;
  const std::unique_ptr<Source> source_;
  const Pipeline pipeline_;
  // An AUTO job's cache route (uses_decoded_cache); a forced job's is pipeline_.
  const std::optional<Pipeline> auto_cache_pipeline_;
  const Pipeline* const cache_pipeline_;
  const std::unique_ptr<DecodedCacheProbe> probe_;
  const std::vector<std::string> fields_;
  std::atomic<bool> retired_{false};
  std::atomic<uint64_t> decoded_hits_{0};
  std::atomic<uint64_t> decoded_misses_{0};
  std::atomic<bool> joined_decoded_cache_group_{false};
  trace::SpanRecorder trace_{trace::SpanRecorder::Options{.capacity = 1}};

  absl::Mutex mu_;
  std::deque<std::shared_ptr<const EpochPlan>> plans_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<uint64_t> reported_bad_samples_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const void> decoded_cache_membership_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const void> aligned_cache_membership_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_WORKER_JOB_CONTEXT_H_
