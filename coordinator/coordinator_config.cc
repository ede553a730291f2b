#include "coordinator/coordinator_config.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/etcd/etcd_client.h"
#include "coordinator/tenant_policy.h"
#include "plan/resume_plan.h"

namespace stoker {

absl::Status CoordinatorConfig::Validate() const {
  if (absl::Status status = tls.ValidateServing(); !status.ok()) return status;
  const size_t colon = listen_address.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen_address.substr(colon + 1), &port) ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen_address: must be host:port (port 0 = any free port), got '", listen_address, "'"));
  }
  if (!advertise_address.empty() && advertise_address.rfind(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("advertise_address: must be host:port, got '", advertise_address, "'"));
  }
  if (heartbeat_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("heartbeat_interval: must be > 0");
  }
  if (worker_timeout <= heartbeat_interval) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker_timeout: must be longer than heartbeat_interval (",
        absl::FormatDuration(heartbeat_interval), "), got ", absl::FormatDuration(worker_timeout)));
  }
  if (lease_duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lease_duration: must be > 0");
  }
  if (max_tasks_per_lease == 0) {
    return absl::InvalidArgumentError("max_tasks_per_lease: must be > 0");
  }
  if (job_idle_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("job_idle_timeout: must be > 0, got ",
                                                   absl::FormatDuration(job_idle_timeout)));
  }
  if (absl::Status status = advisor.prices.Validate(); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("advisor.", status.message()));
  }
  if (absl::Status status = scaler.Validate(); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("scaler.", status.message()));
  }
  RETURN_IF_ERROR(ValidateReplication());
  if (!tenant_policy_path.empty()) {
    RETURN_IF_ERROR(ReadTenantPolicy("tenant_policy_path", tenant_policy_path).status());
  }
  return ValidateLimits();
}

absl::Status CoordinatorConfig::ValidateReplication() const {
  if (state.empty()) {
    for (const auto& [field, value] :
         {std::pair<const char*, const std::string&>{"etcd_ca_file", etcd_ca_file},
          {"etcd_cert_file", etcd_cert_file},
          {"etcd_key_file", etcd_key_file}}) {
      if (!value.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": only with state = etcd://... (--state)"));
      }
    }
    return absl::OkStatus();
  }
  if (!journal_path.empty()) {
    return absl::InvalidArgumentError(
        "state: --state and --journal exclude each other (etcd holds what the journal would)");
  }
  RETURN_IF_ERROR(ParseEtcdTarget(state, "state").status());
  if (etcd_cert_file.empty() != etcd_key_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(etcd_cert_file.empty() ? "etcd_cert_file" : "etcd_key_file",
                     ": etcd's client certificate and key go together (--etcd-cert, --etcd-key)"));
  }
  // etcd leases are granted in whole seconds.
  if (leader_lease_ttl < absl::Seconds(1) ||
      leader_lease_ttl != absl::Seconds(absl::ToInt64Seconds(leader_lease_ttl))) {
    return absl::InvalidArgumentError(
        absl::StrCat("leader_lease_ttl: must be a whole number of seconds >= 1, got ",
                     absl::FormatDuration(leader_lease_ttl)));
  }
  const std::string host = listen_address.substr(0, listen_address.rfind(':'));
  if (advertise_address.empty() &&
      (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::")) {
    return absl::InvalidArgumentError(
        "advertise_address: required with --state when --listen has a wildcard host (the "
        "address standbys name to clients)");
  }
  return absl::OkStatus();
}

absl::Status CoordinatorConfig::ValidateLimits() const {
  const std::pair<const char*, uint64_t> positive[] = {
      {"max_jobs", max_jobs},
      {"max_job_name_bytes", max_job_name_bytes},
      {"max_pipeline_ops", max_pipeline_ops},
      {"max_world_size", max_world_size},
      {"max_epochs", max_epochs},
      {"max_batch_size", max_batch_size},
      {"max_resume_batches", max_resume_batches},
      {"max_id_bytes", max_id_bytes},
      {"max_calls_per_connection", max_calls_per_connection},
      {"max_trace_seconds", max_trace_seconds},
      {"max_trace_spans", max_trace_spans}};
  for (const auto& [field, value] : positive) {
    if (value == 0) return absl::InvalidArgumentError(absl::StrCat(field, ": must be > 0"));
  }
  if (max_request_bytes < kMinRequestBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_request_bytes: must be >= ", kMinRequestBytes, ", got ", max_request_bytes));
  }
  if (max_resume_batches > kMaxResumeUniverse) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_resume_batches: must be <= ", kMaxResumeUniverse, ", got ", max_resume_batches,
        " (a resumed rank's batches must fit one "
        "journal record)"));
  }
  if (grpc_memory_bytes < kMinGrpcMemoryBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grpc_memory_bytes: must be >= ", kMinGrpcMemoryBytes, ", got ", grpc_memory_bytes));
  }
  return absl::OkStatus();
}

}  // namespace stoker
