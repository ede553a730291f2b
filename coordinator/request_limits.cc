#include "coordinator/request_limits.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/pool_name.h"
#include "common/status_macros.h"
#include "trace/trace_proto.h"

namespace stoker {
namespace {

// INVALID_ARGUMENT "<field>: <value><unit>, over the limit of <limit> (--<flag>)" when value is
// over limit.
absl::Status AtMost(absl::string_view field, uint64_t value, absl::string_view unit, uint64_t limit,
                    absl::string_view flag) {
  if (value <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", value, unit, ", over the limit of ", limit, " (--", flag, ")"));
}

}  // namespace

absl::Status CheckOpenJobLimits(const stoker::v1::OpenJobRequest& request,
                                const CoordinatorConfig& config) {
  const stoker::v1::JobSpec& spec = request.spec();
  RETURN_IF_ERROR(AtMost("name", request.name().size(), " bytes", config.max_job_name_bytes,
                         "max-job-name-bytes"));
  RETURN_IF_ERROR(AtMost("spec.pipeline.ops", spec.pipeline().ops_size(), " ops",
                         config.max_pipeline_ops, "max-pipeline-ops"));
  RETURN_IF_ERROR(
      AtMost("spec.world_size", spec.world_size(), "", config.max_world_size, "max-world-size"));
  RETURN_IF_ERROR(AtMost("spec.epochs", spec.epochs(), "", config.max_epochs, "max-epochs"));
  RETURN_IF_ERROR(
      AtMost("spec.batch_size", spec.batch_size(), "", config.max_batch_size, "max-batch-size"));
  return AtMost("resume_tokens", request.resume_tokens_size(), " tokens", config.max_world_size,
                "max-world-size");
}

absl::Status CheckRegisterWorkerLimits(const stoker::v1::RegisterWorkerRequest& request,
                                       const CoordinatorConfig& config) {
  RETURN_IF_ERROR(
      AtMost("address", request.address().size(), " bytes", config.max_id_bytes, "max-id-bytes"));
  RETURN_IF_ERROR(AtMost("hybrid_client_id", request.hybrid_client_id().size(), " bytes",
                         config.max_id_bytes, "max-id-bytes"));
  return ValidatePoolName("pool", request.pool());
}

absl::Status CheckWorkerHeartbeatLimits(const stoker::v1::WorkerHeartbeatRequest& request,
                                        const CoordinatorConfig& config) {
  RETURN_IF_ERROR(AtMost("jobs", request.jobs_size(), " jobs", config.max_jobs, "max-jobs"));
  return AtMost("stats.job_rates", request.stats().job_rates_size(), " jobs", config.max_jobs,
                "max-jobs");
}

absl::Status CheckClientHeartbeatLimits(const stoker::v1::ClientHeartbeatRequest& request,
                                        const CoordinatorConfig& config) {
  RETURN_IF_ERROR(AtMost("client_id", request.client_id().size(), " bytes", config.max_id_bytes,
                         "max-id-bytes"));
  return trace::CheckTraceSpans(request.trace(), "trace");
}

}  // namespace stoker
