#include "trainer_client/python/python_loader_config.h"

#include <string>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "augment/pipeline_text.h"
#include "common/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace stoker {
namespace {

absl::Status Positive(const char* name, uint64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, ": must be > 0"));
}

uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

absl::StatusOr<v1::JobSpec> PythonLoaderConfig::ToJobSpec() const {
  v1::JobSpec spec;
  if (!manifest.empty()) {
    spec.mutable_dataset()->mutable_shards()->set_manifest(manifest);
  } else {
    RETURN_IF_ERROR(Positive("dataset", num_samples));
    RETURN_IF_ERROR(Positive("height", height));
    RETURN_IF_ERROR(Positive("width", width));
    if (channels != 1 && channels != 3) {
      return absl::InvalidArgumentError(absl::StrCat("channels: must be 1 or 3, got ", channels));
    }
    RETURN_IF_ERROR(Positive("num_classes", num_classes));
    v1::SyntheticSource* synthetic = spec.mutable_dataset()->mutable_synthetic();
    synthetic->set_num_samples(num_samples);
    synthetic->set_height(height);
    synthetic->set_width(width);
    synthetic->set_channels(channels);
    synthetic->set_num_classes(num_classes);
  }
  absl::StatusOr<v1::PipelineSpec> parsed = ParsePipelineText(pipeline);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline: ", parsed.status().message()));
  }
  *spec.mutable_pipeline() = *std::move(parsed);
  if (layout != "hwc" && layout != "chw") {
    return absl::InvalidArgumentError(
        absl::StrCat("layout: must be 'hwc' or 'chw', got '", layout, "'"));
  }
  spec.mutable_pipeline()->set_output_layout(layout == "chw" ? v1::LAYOUT_CHW : v1::LAYOUT_HWC);
  if (dtype != "auto" && dtype != "uint8" && dtype != "float32") {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype: must be 'auto', 'uint8' or 'float32', got '", dtype, "'"));
  }
  spec.mutable_pipeline()->set_output_dtype(dtype == "uint8"     ? v1::DTYPE_UINT8
                                            : dtype == "float32" ? v1::DTYPE_FLOAT32
                                                                 : v1::DTYPE_UNSPECIFIED);
  RETURN_IF_ERROR(Positive("batch_size", batch_size));
  RETURN_IF_ERROR(Positive("world_size", world_size));
  RETURN_IF_ERROR(Positive("epochs", epochs));
  if (shuffle != "none" && shuffle != "global" && shuffle != "block") {
    return absl::InvalidArgumentError(
        absl::StrCat("shuffle: must be 'none', 'global' or 'block', got '", shuffle, "'"));
  }
  if (shuffle == "block") RETURN_IF_ERROR(Positive("shuffle_block", shuffle_block));
  spec.set_batch_size(batch_size);
  spec.set_seed(seed);
  spec.set_shuffle(shuffle == "none"    ? v1::SHUFFLE_MODE_NONE
                   : shuffle == "block" ? v1::SHUFFLE_MODE_BLOCK
                                        : v1::SHUFFLE_MODE_GLOBAL);
  spec.set_shuffle_block(shuffle == "block" ? shuffle_block : 0);
  spec.set_world_size(world_size);
  spec.set_epochs(epochs);
  spec.set_drop_last(drop_last);
  return spec;
}

absl::StatusOr<LoaderOptions> PythonLoaderConfig::ToLoaderOptions() const {
  if (coordinator.empty()) return absl::InvalidArgumentError("coordinator: must not be empty");
  RETURN_IF_ERROR(Positive("prefetch_bytes", prefetch_bytes));
  if (rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: must be < world_size (", world_size, "), got ", rank));
  }
  LoaderOptions options;
  options.coordinator_address = coordinator;
  ASSIGN_OR_RETURN(options.spec, ToJobSpec());
  options.job_name = job_name.empty() ? DefaultJobName(options.spec, run_id) : job_name;
  options.rank = rank;
  options.prefetch_bytes = prefetch_bytes;
  options.ordered = ordered;
  options.resume_tokens = resume_tokens;
  if (local_threads > 0) {
    absl::BitGen random;
    options.client_id = absl::StrCat("py-local-", absl::Hex(absl::Uniform<uint64_t>(random)));
  }
  RETURN_IF_ERROR(options.Validate());
  return options;
}

bool PythonLoaderConfig::NeedsFeeder() const { return to_float || device != "cpu"; }

absl::StatusOr<DeviceOptions> PythonLoaderConfig::ToDeviceOptions() const {
  DeviceOptions options;
  options.device = device;
  options.resident_batches = resident_batches;
  options.mean = mean;
  options.std = std;
  if (absl::Status status = options.Validate(); !status.ok()) return status;
  if (NeedsFeeder() && (dtype == "float32" || layout == "chw")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device: converting on ", device == "cpu" ? "the host (to_float=True)" : device,
        " takes uint8 HWC batches: use layout='hwc' and a uint8 pipeline output (dtype='uint8' "
        "or 'auto' without to_float); got layout='",
        layout, "', dtype='", dtype, "'"));
  }
  return options;
}

std::string DefaultJobName(const v1::JobSpec& spec, const std::string& run_id) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    spec.SerializeToCodedStream(&coded);
  }
  std::string name = absl::StrFormat("py-%016x", Fnv1a64(bytes));
  if (!run_id.empty()) absl::StrAppend(&name, "-", run_id);
  return name;
}

}  // namespace stoker
