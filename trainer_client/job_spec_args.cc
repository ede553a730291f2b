#include "trainer_client/job_spec_args.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"

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

absl::StatusOr<v1::JobSpec> JobSpecArgs::ToJobSpec(
    absl::FunctionRef<std::string(absl::string_view field)> name) const {
  auto invalid = [&](absl::string_view field, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(name(field), ": ", what));
  };
  auto positive = [&](absl::string_view field, uint64_t value) {
    return value > 0 ? absl::OkStatus() : invalid(field, "must be > 0");
  };
  v1::JobSpec spec;
  if (!manifest.empty()) {
    spec.mutable_dataset()->mutable_shards()->set_manifest(manifest);
  } else {
    for (const auto& [field, value] :
         {std::pair<absl::string_view, uint64_t>{"num_samples", num_samples},
          {"height", height},
          {"width", width},
          {"num_classes", num_classes}}) {
      if (absl::Status status = positive(field, value); !status.ok()) return status;
    }
    if (channels != 1 && channels != 3) {
      return invalid("channels", absl::StrCat("must be 1 or 3, got ", channels));
    }
    v1::SyntheticSource* synthetic = spec.mutable_dataset()->mutable_synthetic();
    synthetic->set_num_samples(num_samples);
    synthetic->set_height(height);
    synthetic->set_width(width);
    synthetic->set_channels(channels);
    synthetic->set_num_classes(num_classes);
  }
  absl::StatusOr<v1::PipelineSpec> parsed = ParsePipelineText(pipeline);
  if (!parsed.ok()) return invalid("pipeline", parsed.status().message());
  *spec.mutable_pipeline() = *std::move(parsed);
  if (layout != "hwc" && layout != "chw") {
    return invalid("layout", absl::StrCat("must be 'hwc' or 'chw', got '", layout, "'"));
  }
  spec.mutable_pipeline()->set_output_layout(layout == "chw" ? v1::LAYOUT_CHW : v1::LAYOUT_HWC);
  std::optional<v1::DType> output_dtype = DTypeFromName(dtype);
  if (!output_dtype.has_value()) {
    return invalid("dtype", absl::StrCat("must be 'auto', 'uint8', 'float32', 'float16' or "
                                         "'bfloat16', got '",
                                         dtype, "'"));
  }
  spec.mutable_pipeline()->set_output_dtype(*output_dtype);
  if (tail != "auto" && tail != "worker" && tail != "client") {
    return invalid("tail", absl::StrCat("must be 'auto', 'worker' or 'client', got '", tail, "'"));
  }
  spec.set_tail(tail == "worker"   ? v1::TAIL_PLACEMENT_WORKER
                : tail == "client" ? v1::TAIL_PLACEMENT_CLIENT
                                   : v1::TAIL_PLACEMENT_AUTO);
  for (const auto& [field, value] :
       {std::pair<absl::string_view, uint64_t>{"batch_size", batch_size},
        {"world_size", world_size},
        {"epochs", epochs}}) {
    if (absl::Status status = positive(field, value); !status.ok()) return status;
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
  if (shuffle == "block") {
    if (absl::Status status = positive("shuffle_block", shuffle_block); !status.ok()) return status;
  }
  if (shuffle == "shard_window") {
    if (absl::Status status = positive("shuffle_window_shards", shuffle_window_shards);
        !status.ok()) {
      return status;
    }
  }
  spec.set_batch_size(batch_size);
  spec.set_seed(seed);
  spec.set_shuffle(mode->second);
  spec.set_shuffle_block(shuffle == "block" ? shuffle_block : 0);
  spec.set_shuffle_window_shards(shuffle == "shard_window" ? shuffle_window_shards : 0);
  spec.set_world_size(world_size);
  spec.set_epochs(epochs);
  spec.set_drop_last(drop_last);
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
