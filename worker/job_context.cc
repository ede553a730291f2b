#include "worker/job_context.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "data/sample_fields.h"

namespace stoker {
namespace {

constexpr size_t kPlansKept = 2;

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
  PipelineOptions options;
  options.with_targets = NamesTypedTargets(spec);
  options.decoded_prefix = WantsDecodedCache(spec);
  ASSIGN_OR_RETURN(Pipeline pipeline,
                   Pipeline::Compile(spec.pipeline(), source->format(), options));
  return std::shared_ptr<JobContext>(new JobContext(
      job_id, std::move(tenant), spec, std::move(source), std::move(pipeline), std::move(fields)));
}

JobContext::JobContext(uint64_t job_id, std::string tenant, stoker::v1::JobSpec spec,
                       std::unique_ptr<Source> source, Pipeline pipeline,
                       std::vector<std::string> fields)
    : job_id_(job_id),
      tenant_(std::move(tenant)),
      spec_(std::move(spec)),
      source_(std::move(source)),
      pipeline_(std::move(pipeline)),
      fields_(std::move(fields)) {}

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
