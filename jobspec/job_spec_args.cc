#include "jobspec/job_spec_args.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "common/status_macros.h"

namespace stoker {

namespace {

constexpr std::pair<absl::string_view, v1::DType> kDTypeNames[] = {
    {"auto", v1::DTYPE_UNSPECIFIED},
    {"uint8", v1::DTYPE_UINT8},
    {"float32", v1::DTYPE_FLOAT32},
    {"float16", v1::DTYPE_FLOAT16},
    {"bfloat16", v1::DTYPE_BFLOAT16}};

}  // namespace

std::optional<v1::DType> DTypeFromName(absl::string_view name) {
  for (const auto& [known, dtype] : kDTypeNames) {
    if (known == name) return dtype;
  }
  return std::nullopt;
}

absl::string_view DTypeName(v1::DType dtype) {
  for (const auto& [name, known] : kDTypeNames) {
    if (known == dtype) return name == "auto" ? "unspecified" : name;
  }
  return "unspecified";
}

namespace {

// INVALID_ARGUMENT "<the field's name>: <what>".
using Invalid = absl::FunctionRef<absl::Status(absl::string_view field, absl::string_view what)>;

absl::Status Positive(Invalid invalid, absl::string_view field, uint64_t value) {
  return value > 0 ? absl::OkStatus() : invalid(field, "must be > 0");
}

absl::Status SetDataset(const JobSpecArgs& args, Invalid invalid, v1::JobSpec* spec) {
  if (!args.manifest.empty()) {
    spec->mutable_dataset()->mutable_shards()->set_manifest(args.manifest);
    return absl::OkStatus();
  }
  if (!args.paths.empty()) {
    for (const std::string& path : args.paths) {
      spec->mutable_dataset()->mutable_shards()->add_paths(path);
    }
    return absl::OkStatus();
  }
  for (const auto& [field, value] :
       {std::pair<absl::string_view, uint64_t>{"num_samples", args.num_samples},
        {"height", args.height},
        {"width", args.width},
        {"num_classes", args.num_classes}}) {
    RETURN_IF_ERROR(Positive(invalid, field, value));
  }
  if (args.channels != 1 && args.channels != 3) {
    return invalid("channels", absl::StrCat("must be 1 or 3, got ", args.channels));
  }
  v1::SyntheticSource* synthetic = spec->mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(args.num_samples);
  synthetic->set_height(args.height);
  synthetic->set_width(args.width);
  synthetic->set_channels(args.channels);
  synthetic->set_num_classes(args.num_classes);
  return absl::OkStatus();
}

// The pipeline, its output layout and type, and where its tail runs.
absl::Status SetPipeline(const JobSpecArgs& args, Invalid invalid, v1::JobSpec* spec) {
  absl::StatusOr<v1::PipelineSpec> parsed = ParsePipelineText(args.pipeline);
  if (!parsed.ok()) return invalid("pipeline", parsed.status().message());
  *spec->mutable_pipeline() = *std::move(parsed);
  if (args.layout != "hwc" && args.layout != "chw") {
    return invalid("layout", absl::StrCat("must be 'hwc' or 'chw', got '", args.layout, "'"));
  }
  spec->mutable_pipeline()->set_output_layout(args.layout == "chw" ? v1::LAYOUT_CHW
                                                                   : v1::LAYOUT_HWC);
  std::optional<v1::DType> output_dtype = DTypeFromName(args.dtype);
  if (!output_dtype.has_value()) {
    return invalid("dtype", absl::StrCat("must be 'auto', 'uint8', 'float32', 'float16' or "
                                         "'bfloat16', got '",
                                         args.dtype, "'"));
  }
  spec->mutable_pipeline()->set_output_dtype(*output_dtype);
  const std::string& tail = args.tail;
  if (tail != "auto" && tail != "worker" && tail != "client") {
    return invalid("tail", absl::StrCat("must be 'auto', 'worker' or 'client', got '", tail, "'"));
  }
  spec->set_tail(tail == "worker"   ? v1::TAIL_PLACEMENT_WORKER
                 : tail == "client" ? v1::TAIL_PLACEMENT_CLIENT
                                    : v1::TAIL_PLACEMENT_AUTO);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::JobSpec> JobSpecArgs::ToJobSpec(
    absl::FunctionRef<std::string(absl::string_view field)> name) const {
  auto invalid_fn = [&](absl::string_view field, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(name(field), ": ", what));
  };
  const Invalid invalid = invalid_fn;
  v1::JobSpec spec;
  RETURN_IF_ERROR(SetDataset(*this, invalid, &spec));
  RETURN_IF_ERROR(SetPipeline(*this, invalid, &spec));
  for (const auto& [field, value] :
       {std::pair<absl::string_view, uint64_t>{"batch_size", batch_size},
        {"world_size", world_size},
        {"epochs", epochs}}) {
    RETURN_IF_ERROR(Positive(invalid, field, value));
  }
  static const auto* const kShuffleModes =
      new std::map<std::string, v1::ShuffleMode>{{"none", v1::SHUFFLE_MODE_NONE},
                                                 {"global", v1::SHUFFLE_MODE_GLOBAL},
                                                 {"block", v1::SHUFFLE_MODE_BLOCK},
                                                 {"shard_window", v1::SHUFFLE_MODE_SHARD_WINDOW}};
  const auto mode = kShuffleModes->find(shuffle);
  if (mode == kShuffleModes->end()) {
    return invalid("shuffle", absl::StrCat("must be 'none', 'global', 'block' or 'shard_window', "
                                           "got '",
                                           shuffle, "'"));
  }
  if (shuffle == "block") RETURN_IF_ERROR(Positive(invalid, "shuffle_block", shuffle_block));
  if (shuffle == "shard_window") {
    RETURN_IF_ERROR(Positive(invalid, "shuffle_window_shards", shuffle_window_shards));
  }
  spec.set_batch_size(batch_size);
  spec.set_seed(seed);
  spec.set_shuffle(mode->second);
  spec.set_shuffle_block(shuffle == "block" ? shuffle_block : 0);
  spec.set_shuffle_window_shards(shuffle == "shard_window" ? shuffle_window_shards : 0);
  if (sweep_seed != 0 && shuffle != "block" && shuffle != "shard_window") {
    return invalid("sweep_seed",
                   "aligns blocks or shard windows: needs shuffle 'block' or "
                   "'shard_window'");
  }
  spec.set_sweep_seed(sweep_seed);
  spec.set_world_size(world_size);
  spec.set_epochs(epochs);
  spec.set_drop_last(drop_last);
  for (const std::string& field : fields) spec.add_fields(field);
  if (decoded_cache == "on") {
    spec.set_decoded_cache(v1::DECODED_CACHE_ON);
  } else if (decoded_cache == "off") {
    spec.set_decoded_cache(v1::DECODED_CACHE_OFF);
  } else if (decoded_cache == "always") {
    spec.set_decoded_cache(v1::DECODED_CACHE_ALWAYS);
  } else if (decoded_cache == "auto") {
    spec.set_decoded_cache(v1::DECODED_CACHE_AUTO);
  } else if (!decoded_cache.empty()) {
    return invalid("decoded_cache", absl::StrCat("must be 'auto', 'on', 'off' or 'always', got '",
                                                 decoded_cache, "'"));
  }
  if (max_bad_sample_fraction.has_value()) {
    const double fraction = *max_bad_sample_fraction;
    if (!(fraction >= 0 && fraction <= 1)) {  // NaN fails too
      return invalid("max_bad_sample_fraction", absl::StrCat("must be in [0, 1], got ", fraction));
    }
    spec.set_max_bad_sample_fraction(fraction);
  }
  return spec;
}

}  // namespace stoker
