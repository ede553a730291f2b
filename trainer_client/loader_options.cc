#include "trainer_client/loader_options.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/address_list.h"
#include "common/field_limits.h"
#include "common/payload_codec.h"
#include "common/status_macros.h"

namespace stoker {

uint64_t LoaderOptions::MaxBatchPayloadBytes(const stoker::v1::OpenJobResponse& job) const {
  if (spec.fields_size() == 0) return job.batch_bytes();
  // One sample's elements: H × W × C, or the whole tensor's bytes when the shape is not known.
  uint64_t sample_elements = job.batch_bytes();
  if (job.batch_shape_size() >= 2) {
    sample_elements = 1;
    for (int d = 1; d < job.batch_shape_size(); ++d) {
      sample_elements *= static_cast<uint64_t>(std::max<int64_t>(job.batch_shape(d), 0));
    }
  }
  return job.batch_bytes() + MaxFieldColumnBytes(spec.batch_size(), spec.fields(), sample_elements);
}

absl::Status LoaderOptions::Validate() const {
  if (absl::Status status = tls.Validate(); !status.ok()) return status;
  RETURN_IF_ERROR(ParseAddressList("coordinator_address", coordinator_address).status());
  if (job_name.empty()) return absl::InvalidArgumentError("job_name: must not be empty");
  if (spec.world_size() == 0) {
    return absl::InvalidArgumentError("spec.world_size: must be > 0, got 0");
  }
  if (rank >= spec.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: must be < spec.world_size (", spec.world_size(), "), got ", rank));
  }
  if (prefetch_bytes == 0) return absl::InvalidArgumentError("prefetch_bytes: must be > 0, got 0");
  for (size_t i = 0; i < only_workers.size(); ++i) {
    if (only_workers[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("only_workers[", i, "]: must not be empty"));
    }
  }
  for (size_t i = 0; i < resume_tokens.size(); ++i) {
    if (resume_tokens[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("resume_tokens[", i, "]: must not be empty"));
    }
  }
  if (heartbeat_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("heartbeat_interval: must be > 0, got ",
                                                   absl::FormatDuration(heartbeat_interval)));
  }
  if (rpc_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rpc_timeout: must be > 0, got ", absl::FormatDuration(rpc_timeout)));
  }
  RETURN_IF_ERROR(ValidateBackoffPolicy(connect_backoff, "connect_backoff"));
  if (compression != "auto") {
    if (absl::Status status = ParseCompressionChoice(compression, "compression").status();
        !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(status.message(), " or auto"));
    }
  }
  return absl::OkStatus();
}

}  // namespace stoker
