#include "coordinator/coordinator_config.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace stoker {

absl::Status CoordinatorConfig::Validate() const {
  if (absl::Status status = tls.Validate(); !status.ok()) return status;
  const size_t colon = listen_address.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen_address.substr(colon + 1), &port) ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen_address: must be host:port (port 0 = any free port), got '", listen_address, "'"));
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
  return absl::OkStatus();
}

}  // namespace stoker
