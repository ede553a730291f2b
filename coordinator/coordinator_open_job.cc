// Coordinator: OpenJob, which creates a job (or reopens one by name) and resumes a rank from
// its tokens. See coordinator.h.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/coordinator.h"
#include "coordinator/request_limits.h"
#include "google/protobuf/util/message_differencer.h"
#include "plan/resume_plan.h"
#include "plan/resume_token.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;

// Tokens taken from a job of another tenant resume nothing for this caller: NOT_FOUND, as for a
// job that does not exist. Tokens taken before tenants existed carry none and resume anywhere.
// A token that does not decode is left to PlanResume, which names what is wrong with it.
absl::Status CheckTokensOfTenant(const stoker::v1::OpenJobRequest& request,
                                 const std::string& tenant) {
  for (int i = 0; i < request.resume_tokens_size(); ++i) {
    absl::StatusOr<stoker::v1::ResumeToken> token = DecodeResumeToken(request.resume_tokens(i));
    if (token.ok() && !token->tenant().empty() && token->tenant() != tenant) {
      return absl::NotFoundError(absl::StrCat("resume_tokens[", i, "]: taken from job '",
                                              token->job_name(),
                                              "', which is not this tenant's: no such job"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<stoker::v1::OpenJobResponse> Coordinator::OpenJob(
    const stoker::v1::OpenJobRequest& request, const TenantScope& scope) {
  if (request.name().empty()) return absl::InvalidArgumentError("name: must be set");
  RETURN_IF_ERROR(CheckOpenJobLimits(request, config_));
  OpenJobArgs args;
  args.request = &request;
  args.tenant = scope.tenant;
  ASSIGN_OR_RETURN(args.placement, PlaceTail(request.spec()));
  // Outside the lock: computing a geometry opens the dataset and compiles the pipeline, and the
  // resume plan may be large.
  ASSIGN_OR_RETURN(args.geometry, GeometryFor(args.tenant, request.name(), args.placement));
  const JobGeometry& geometry = args.geometry;
  if (request.resume_tokens_size() > 0) {
    if (request.rank() >= request.spec().world_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank: ", request.rank(), " is outside world size ", request.spec().world_size()));
    }
    RETURN_IF_ERROR(CheckTokensOfTenant(request, args.tenant));
    std::vector<std::string> tokens(request.resume_tokens().begin(), request.resume_tokens().end());
    ASSIGN_OR_RETURN(args.start, PlanResume(tokens, request.spec(), geometry.num_samples,
                                            request.rank(), config_.max_resume_batches));
  } else {
    args.start.set_spec_fingerprint(SpecFingerprint(request.spec()));
  }
  args.start.set_tenant(args.tenant);
  return Durably(&Coordinator::OpenJobLocked, args);
}

absl::StatusOr<JobGeometry> Coordinator::GeometryFor(const std::string& tenant,
                                                     const std::string& name,
                                                     const TailPlacement& placement) {
  {
    absl::MutexLock lock(&mu_);
    const JobRecord* job = state_.FindJobByName(tenant, name);
    // An open job keeps the geometry it was created with: reopening it reads no dataset.
    if (job != nullptr &&
        google::protobuf::util::MessageDifferencer::Equals(job->spec, placement.job_spec)) {
      return job->geometry;
    }
  }
  // The geometry of what the workers send: with a client tail, its uint8 HWC batches.
  ASSIGN_OR_RETURN(stoker::v1::JobGeometry geometry,
                   ComputeJobGeometry(placement.worker_spec, open_source_));
  return CheckJobGeometry(placement.worker_spec, geometry, "spec");
}

absl::StatusOr<stoker::v1::OpenJobResponse> Coordinator::OpenJobLocked(const OpenJobArgs& args) {
  const stoker::v1::OpenJobRequest& request = *args.request;
  const JobRecord* job = state_.FindJobByName(args.tenant, request.name());
  if (job == nullptr) {
    if (state_.num_jobs() >= config_.max_jobs) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the coordinator holds ", state_.num_jobs(), " jobs, its limit (--max-jobs=",
                       config_.max_jobs, "); finished jobs leave after --job-idle-timeout-ms"));
    }
    // Only a new job counts against the quotas: reopening or resuming one holds nothing more.
    const TenantUsage usage = state_.UsageOf(args.tenant);
    if (std::optional<QuotaRefusal> refusal =
            OpenJobOverQuota(args.tenant, tenant_policy_->For(args.tenant), usage.jobs, usage.ranks,
                             args.placement.job_spec.world_size())) {
      return RefuseByQuotaLocked(args.tenant, *std::move(refusal));
    }
    StateUpdate update;
    stoker::v1::CreateJobUpdate* create = update.mutable_create_job();
    create->set_job_id(state_.next_job_id());
    create->set_name(request.name());
    if (args.tenant != kDefaultTenant) create->set_tenant(args.tenant);
    *create->mutable_spec() = args.placement.job_spec;
    *create->mutable_geometry() = ToProto(args.geometry);
    RETURN_IF_ERROR(ApplyUpdate(update));
    job = state_.FindJobByName(args.tenant, request.name());
    STOKER_LOG(INFO) << "opened job " << ShortId(job->id) << " '" << job->name << "' of tenant "
                     << job->tenant << ": " << job->geometry.batches_per_rank
                     << " batches per rank per epoch, " << job->spec.epochs() << " epochs, "
                     << job->spec.world_size() << " ranks";
  } else if (!google::protobuf::util::MessageDifferencer::Equals(job->spec,
                                                                 args.placement.job_spec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", request.name(), "' already exists (id ", ShortId(job->id),
                     ") with a different spec; open it with the same spec or use another name"));
  }
  if (args.start.resumed()) {
    StateUpdate update;
    stoker::v1::ResumeRankUpdate* resume = update.mutable_resume_rank();
    resume->set_job_id(job->id);
    resume->set_rank(request.rank());
    resume->set_epoch(args.start.epoch());
    const std::vector<uint64_t> batches = RemainingBatches(args.start);
    resume->mutable_batches()->Assign(batches.begin(), batches.end());
    const uint64_t job_id = job->id;
    RETURN_IF_ERROR(ApplyUpdate(update));
    job = state_.FindJob(job_id);
    STOKER_LOG(INFO) << "job " << job_id << " rank " << request.rank() << " resumed at epoch "
                     << args.start.epoch() << " with " << batches.size() << " batches of it left";
  }
  probe_retire_.Heard(job->id, clock_->Now());
  stoker::v1::OpenJobResponse response;
  *response.mutable_start() = args.start;
  response.set_job_id(job->id);
  response.set_batches_per_epoch_per_rank(job->geometry.batches_per_rank);
  response.set_num_samples(job->geometry.num_samples);
  response.set_batch_bytes(job->geometry.batch_bytes);
  for (int64_t d : job->geometry.batch_shape) response.add_batch_shape(d);
  if (args.placement.client_tail.has_value()) {
    *response.mutable_client_tail() = *args.placement.client_tail;
  }
  return response;
}

}  // namespace stoker
