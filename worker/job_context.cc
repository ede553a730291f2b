#include "worker/job_context.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/counter_rng.h"
#include "common/status_macros.h"
#include "data/sample_fields.h"

namespace stoker {
namespace {

constexpr size_t kPlansKept = 2;

// The cache route's pipeline (JobContext::uses_decoded_cache), or null.
const Pipeline* CacheRoutePipeline(const stoker::v1::JobSpec& spec, const Source& source,
                                   const Pipeline& pipeline,
                                   const std::optional<Pipeline>& auto_cache_pipeline) {
  if (auto_cache_pipeline.has_value()) return &*auto_cache_pipeline;
  const bool forced = DecodedCacheModeOf(spec) == DecodedCacheMode::kForced;
  return forced && pipeline.prefix_ops() > 0 && source.fingerprint() != 0 ? &pipeline : nullptr;
}

}  // namespace

absl::StatusOr<std::shared_ptr<JobContext>> JobContext::Create(uint64_t job_id,
                                                               const stoker::v1::JobSpec& spec,
                                                               const DatasetIo& io,
                                                               std::string tenant) {
  // GLOBAL reads the dataset at random: remote shards ranged when the cache cannot hold them.
  const bool random_order = spec.shuffle() == stoker::v1::SHUFFLE_MODE_GLOBAL ||
                            spec.shuffle() == stoker::v1::SHUFFLE_MODE_UNSPECIFIED;
  ASSIGN_OR_RETURN(std::vector<std::string> fields, SourceFields(spec));
  ASSIGN_OR_RETURN(std::unique_ptr<Source> source,
                   CreateSource(spec.dataset(), spec.seed(), io, random_order, std::move(fields)));
  return Create(job_id, spec, std::move(source), std::move(tenant));
}

absl::StatusOr<std::shared_ptr<JobContext>> JobContext::Create(uint64_t job_id,
                                                               const stoker::v1::JobSpec& spec,
                                                               std::unique_ptr<Source> source,
                                                               std::string tenant) {
  RETURN_IF_ERROR(CheckJobFields(spec, *source));
  ASSIGN_OR_RETURN(std::vector<std::string> fields, SourceFields(spec));
  const DecodedCacheMode mode = DecodedCacheModeOf(spec);
  PipelineOptions options;
  options.with_targets = NamesTypedTargets(spec);
  options.decoded_prefix = mode == DecodedCacheMode::kForced;
  ASSIGN_OR_RETURN(Pipeline pipeline,
                   Pipeline::Compile(spec.pipeline(), source->format(), options));
  // AUTO: a second compile for the cache route, only where it gives Run's bytes.
  std::optional<Pipeline> auto_cache_pipeline;
  if (mode == DecodedCacheMode::kAuto && source->fingerprint() != 0 &&
      !pipeline.may_decode_window_downscaled()) {
    options.decoded_prefix = true;
    ASSIGN_OR_RETURN(Pipeline split, Pipeline::Compile(spec.pipeline(), source->format(), options));
    if (split.prefix_ops() > 0) auto_cache_pipeline.emplace(std::move(split));
  }
  return std::shared_ptr<JobContext>(
      new JobContext(job_id, std::move(tenant), spec, std::move(source), std::move(pipeline),
                     std::move(auto_cache_pipeline), std::move(fields)));
}

DecodedCacheMode DecodedCacheModeOf(const stoker::v1::JobSpec& spec) {
  switch (spec.decoded_cache()) {
    case stoker::v1::DECODED_CACHE_ON:
    case stoker::v1::DECODED_CACHE_ALWAYS:
      return DecodedCacheMode::kForced;
    case stoker::v1::DECODED_CACHE_OFF:
      return DecodedCacheMode::kOff;
    default:
      return DecodedCacheMode::kAuto;
  }
}

JobContext::JobContext(uint64_t job_id, std::string tenant, stoker::v1::JobSpec spec,
                       std::unique_ptr<Source> source, Pipeline pipeline,
                       std::optional<Pipeline> auto_cache_pipeline, std::vector<std::string> fields)
    : job_id_(job_id),
      tenant_(std::move(tenant)),
      spec_(std::move(spec)),
      source_(std::move(source)),
      pipeline_(std::move(pipeline)),
      auto_cache_pipeline_(std::move(auto_cache_pipeline)),
      cache_pipeline_(CacheRoutePipeline(spec_, *source_, pipeline_, auto_cache_pipeline_)),
      probe_(auto_cache_pipeline_.has_value()
                 ? std::make_unique<DecodedCacheProbe>(source_->size(), spec_.epochs())
                 : nullptr),
      fields_(std::move(fields)) {}

std::optional<DecodedCacheGroups::Key> JobContext::aligned_cache_group() const {
  if (spec_.sweep_seed() == 0) return std::nullopt;
  const uint32_t window = spec_.shuffle() == stoker::v1::SHUFFLE_MODE_BLOCK
                              ? spec_.shuffle_block()
                              : spec_.shuffle_window_shards();
  // Another key than decoded_cache_group's: the prefix fingerprint mixed with what aligns.
  return DecodedCacheGroups::Key{source_->fingerprint(),
                                 KeyOf(cache_pipeline_->prefix_fingerprint() ^ spec_.sweep_seed(),
                                       static_cast<uint64_t>(spec_.shuffle()), window)};
}

uint64_t JobContext::aligned_window_samples() const {
  if (spec_.sweep_seed() == 0) return 0;
  if (spec_.shuffle() == stoker::v1::SHUFFLE_MODE_BLOCK) return spec_.shuffle_block();
  const uint64_t shards = std::max<size_t>(source_->shard_starts().size(), 2) - 1;
  const uint64_t window = std::min<uint64_t>(spec_.shuffle_window_shards(), shards);
  return (source_->size() * window + shards - 1) / shards;  // a window's share, rounded up
}

void JobContext::JoinDecodedCacheGroup(DecodedCache& cache) {
  if (joined_decoded_cache_group_.load(std::memory_order_acquire)) return;
  absl::MutexLock lock(&mu_);
  if (decoded_cache_membership_ == nullptr) {
    decoded_cache_membership_ = cache.groups().Join(decoded_cache_group());
    if (const auto aligned = aligned_cache_group()) {
      aligned_cache_membership_ = cache.groups().Join(*aligned);
    }
  }
  joined_decoded_cache_group_.store(true, std::memory_order_release);
}

bool JobContext::FirstBadSampleReport(uint64_t index) {
  absl::MutexLock lock(&mu_);
  if (reported_bad_samples_.size() >= kMaxRememberedBadSamples) return true;
  return reported_bad_samples_.insert(index).second;
}

absl::StatusOr<std::shared_ptr<const EpochPlan>> JobContext::Plan(uint32_t epoch) {
  if (epoch >= spec_.epochs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("epoch ", epoch, " is past the job's ", spec_.epochs(), " epochs"));
  }
  {
    absl::MutexLock lock(&mu_);
    for (const auto& plan : plans_) {
      if (plan->epoch() == epoch) return plan;
    }
  }
  // A plan is a few words computed in O(1), or 16 bytes a shard for SHARD_WINDOW
  // (plan/epoch_plan.h); two threads racing here compute the same one.
  ASSIGN_OR_RETURN(EpochPlan plan,
                   EpochPlan::Create(spec_, source_->size(), epoch, source_->shard_starts()));
  auto shared = std::make_shared<const EpochPlan>(std::move(plan));
  absl::MutexLock lock(&mu_);
  plans_.push_back(shared);
  if (plans_.size() > kPlansKept) plans_.pop_front();
  return shared;
}

}  // namespace stoker
