#include "coordinator/external_scaler_service.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/pool_name.h"
#include "common/status_macros.h"
#include "common/tls/principal.h"

namespace stoker {

ExternalScalerService::ExternalScalerService(Coordinator* coordinator, ScaleDecider* decider,
                                             const TlsConfig& tls, uint32_t max_job_name_bytes,
                                             const LeaderGate* leader)
    : coordinator_(coordinator),
      decider_(decider),
      gate_(tls),
      leader_(leader),
      max_job_name_bytes_(max_job_name_bytes) {}

void ExternalScalerService::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
}

absl::StatusOr<ScaleScope> ExternalScalerService::ScopeOf(
    const externalscaler::ScaledObjectRef& ref) const {
  ScaleScope scope;
  const auto& metadata = ref.scalermetadata();
  if (auto it = metadata.find("pool"); it != metadata.end()) scope.pool = it->second;
  if (auto it = metadata.find("job"); it != metadata.end()) scope.job = it->second;
  if (auto it = metadata.find("tenant"); it != metadata.end()) scope.tenant = it->second;
  RETURN_IF_ERROR(ValidatePoolName("scalerMetadata.pool", scope.pool));
  if (!scope.tenant.empty() && scope.tenant != kDefaultTenant) {
    RETURN_IF_ERROR(CheckTenantName("scalerMetadata.tenant", scope.tenant));
  }
  if (scope.job.size() > max_job_name_bytes_) {
    return absl::InvalidArgumentError(absl::StrCat("scalerMetadata.job: ", scope.job.size(),
                                                   " bytes, over the limit of ",
                                                   max_job_name_bytes_, " (--max-job-name-bytes)"));
  }
  return scope;
}

absl::Status ExternalScalerService::Admit(grpc::ServerContext* context, const char* method) {
  RETURN_IF_ERROR(gate_.Check(*context, method, {Role::kScaler}).status());
  return leader_->Check(context).status();
}

absl::StatusOr<uint32_t> ExternalScalerService::Workers(
    grpc::ServerContext* context, const char* method, const externalscaler::ScaledObjectRef& ref) {
  RETURN_IF_ERROR(Admit(context, method));
  ASSIGN_OR_RETURN(const ScaleScope scope, ScopeOf(ref));
  return decider_->Decide(scope, WorkersWanted(coordinator_->GetStatus(), scope));
}

grpc::Status ExternalScalerService::IsActive(grpc::ServerContext* context,
                                             const externalscaler::ScaledObjectRef* ref,
                                             externalscaler::IsActiveResponse* response) {
  const absl::StatusOr<uint32_t> workers = Workers(context, "IsActive", *ref);
  if (workers.ok()) response->set_result(*workers > 0);
  return ToGrpcStatus(workers.status());
}

grpc::Status ExternalScalerService::StreamIsActive(
    grpc::ServerContext* context, const externalscaler::ScaledObjectRef* ref,
    grpc::ServerWriter<externalscaler::IsActiveResponse>* writer) {
  {
    absl::MutexLock lock(&mu_);
    if (streams_ >= kMaxStreams) {
      return ToGrpcStatus(absl::ResourceExhaustedError(
          absl::StrCat("StreamIsActive: ", kMaxStreams, " streams open, the most served")));
    }
    ++streams_;
  }
  absl::Status status;
  bool sent = false;
  bool last = false;
  absl::MutexLock lock(&mu_);
  while (!stopping_ && !context->IsCancelled()) {
    mu_.Unlock();
    const absl::StatusOr<uint32_t> workers = Workers(context, "StreamIsActive", *ref);
    mu_.Lock();
    if (!workers.ok()) {
      status = workers.status();
      break;
    }
    const bool active = *workers > 0;
    if (!sent || active != last) {
      externalscaler::IsActiveResponse response;
      response.set_result(active);
      mu_.Unlock();
      const bool written = writer->Write(response);
      mu_.Lock();
      if (!written) break;
      sent = true;
      last = active;
    }
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), kStreamCheckInterval);
  }
  --streams_;
  return ToGrpcStatus(status);
}

grpc::Status ExternalScalerService::GetMetricSpec(grpc::ServerContext* context,
                                                  const externalscaler::ScaledObjectRef* ref,
                                                  externalscaler::GetMetricSpecResponse* response) {
  absl::Status status = Admit(context, "GetMetricSpec");
  if (status.ok()) status = ScopeOf(*ref).status();
  if (!status.ok()) return ToGrpcStatus(status);
  externalscaler::MetricSpec* spec = response->add_metricspecs();
  spec->set_metricname(kMetricName);
  spec->set_targetsize(1);
  spec->set_targetsizefloat(1);
  return grpc::Status::OK;
}

grpc::Status ExternalScalerService::GetMetrics(grpc::ServerContext* context,
                                               const externalscaler::GetMetricsRequest* request,
                                               externalscaler::GetMetricsResponse* response) {
  const absl::StatusOr<uint32_t> workers =
      Workers(context, "GetMetrics", request->scaledobjectref());
  if (!workers.ok()) return ToGrpcStatus(workers.status());
  externalscaler::MetricValue* value = response->add_metricvalues();
  // KEDA asks by the name it was given (it may prefix it, "s0-stoker-workers"): answer in kind.
  value->set_metricname(request->metricname().empty() ? kMetricName : request->metricname());
  value->set_metricvalue(*workers);
  value->set_metricvaluefloat(*workers);
  return grpc::Status::OK;
}

}  // namespace stoker
