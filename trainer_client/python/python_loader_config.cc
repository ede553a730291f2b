#include "trainer_client/python/python_loader_config.h"

#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "augment/pipeline_text.h"
#include "augment/tail_split.h"
#include "common/address_list.h"
#include "common/status_macros.h"
#include "plan/resume_token.h"

namespace stoker {
namespace {

using TlsNames = std::pair<absl::string_view, absl::string_view>;

// `status` with a TlsConfig field that starts its message renamed as `names` say (the Python
// TlsOptions' fields are TlsConfig's, so only the hybrid producer's need renaming).
absl::Status WithNames(const absl::Status& status, absl::Span<const TlsNames> names) {
  absl::string_view message = status.message();
  for (const auto& [field, argument] : names) {
    if (absl::ConsumePrefix(&message, field)) {
      return absl::Status(status.code(), absl::StrCat(argument, message));
    }
  }
  return status;
}

absl::Status Positive(const char* name, uint64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, ": must be > 0"));
}

}  // namespace

absl::StatusOr<v1::JobSpec> PythonLoaderConfig::ToJobSpec() const {
  // Python's `dataset` argument sets num_samples.
  ASSIGN_OR_RETURN(v1::JobSpec spec, JobSpecArgs::ToJobSpec([](absl::string_view field) {
                     return field == "num_samples" ? std::string("dataset") : std::string(field);
                   }));
  // The feeder's output, whatever layout the workers' part has.
  if (DeviceRunsTail(spec.pipeline())) spec.mutable_pipeline()->set_output_layout(v1::LAYOUT_CHW);
  return spec;
}

bool PythonLoaderConfig::DeviceRunsTail(const v1::PipelineSpec& pipeline) const {
  return device != "cpu" && !to_float && mean.empty() && std.empty() && tail != "worker" &&
         (dtype == "auto" || dtype == "float32") && TailStart(pipeline).ok();
}

absl::StatusOr<LoaderOptions> PythonLoaderConfig::ToLoaderOptions() const {
  RETURN_IF_ERROR(ParseAddressList("coordinator", coordinator).status());
  RETURN_IF_ERROR(Positive("prefetch_bytes", prefetch_bytes));
  if (rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: must be < world_size (", world_size, "), got ", rank));
  }
  LoaderOptions options;
  options.coordinator_address = coordinator;
  options.tls.cert_file = tls_cert;
  options.tls.key_file = tls_key;
  options.tls.ca_file = tls_ca;
  options.tls.bearer_token_file = bearer_token_file;
  options.tls.insecure = insecure;
  ASSIGN_OR_RETURN(options.spec, ToJobSpec());
  if (tail == "client" && NeedsFeeder() && !DeviceRunsTail(options.spec.pipeline())) {
    return absl::InvalidArgumentError(
        "tail: \"client\" not with convert= or a CUDA device (the feeder converts uint8 batches "
        "itself)");
  }
  options.compression = compression;
  options.job_name = job_name;
  if (job_name.empty()) options.job_name = DefaultJobName(options.spec, run_id);
  options.rank = rank;
  options.prefetch_bytes = prefetch_bytes;
  options.ordered = ordered;
  options.resume_tokens = resume_tokens;
  if (hybrid_threads > 0) {
    absl::BitGen random;
    options.client_id = absl::StrCat("py-local-", absl::Hex(absl::Uniform<uint64_t>(random)));
  }
  RETURN_IF_ERROR(options.Validate());
  return options;
}

absl::StatusOr<TlsConfig> PythonLoaderConfig::HybridProducerTls() const {
  if (insecure) return TlsConfig::Plaintext();
  TlsConfig tls;
  tls.cert_file = hybrid_tls_cert;
  tls.key_file = hybrid_tls_key;
  tls.ca_file = tls_ca;
  if (hybrid_tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "hybrid.cert_file: hybrid mode under TLS needs the in-process producer's worker "
        "certificate (and hybrid.key_file)");
  }
  constexpr TlsNames kNames[] = {{"tls.cert_file", "hybrid.cert_file"},
                                 {"tls.key_file", "hybrid.key_file"}};
  RETURN_IF_ERROR(WithNames(tls.ValidateServing(), kNames));
  return tls;
}

bool PythonLoaderConfig::NeedsFeeder() const { return to_float || device != "cpu"; }

absl::StatusOr<DeviceOptions> PythonLoaderConfig::ToDeviceOptions() const {
  DeviceOptions options;
  options.device = device;
  options.resident_batches = resident_batches;
  options.mean = mean;
  options.std = std;
  if (absl::Status status = options.Validate(); !status.ok()) return status;
  ASSIGN_OR_RETURN(const v1::JobSpec spec, ToJobSpec());
  if (DeviceRunsTail(spec.pipeline())) return options;  // the workers send uint8 HWC
  if (NeedsFeeder() && ((dtype != "uint8" && dtype != "auto") || layout == "chw")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device: converting on ", device == "cpu" ? "the host (convert=)" : device,
        " takes uint8 HWC batches: use layout='hwc' and a uint8 pipeline output (dtype='uint8' "
        "or 'auto' without to_float in the pipeline); got layout='",
        layout, "', dtype='", dtype, "'"));
  }
  return options;
}

std::string DefaultJobName(const v1::JobSpec& spec, const std::string& run_id) {
  std::string name = absl::StrFormat("py-%016x", JobSpecHash(spec));
  if (!run_id.empty()) absl::StrAppend(&name, "-", run_id);
  return name;
}

}  // namespace stoker
