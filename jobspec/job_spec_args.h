#ifndef STOKER_JOBSPEC_JOB_SPEC_ARGS_H_
#define STOKER_JOBSPEC_JOB_SPEC_ARGS_H_

// A JobSpec from plain arguments, as a command line (stoker-bench-client) or the Python module
// (stoker.Loader) takes them: a dataset (a shards manifest, or synthetic images), a pipeline in
// the text syntax (augment/pipeline_text.h), and the plan's settings by name.
//
// Thread-compatible value type.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// The names of the batch element types: "uint8", "float32", "float16", "bfloat16", and "auto"
// for DTYPE_UNSPECIFIED (the pipeline's own type). nullopt for another name.
std::optional<v1::DType> DTypeFromName(absl::string_view name);
// The name of `dtype` ("unspecified" for DTYPE_UNSPECIFIED and unknown values).
absl::string_view DTypeName(v1::DType dtype);

struct JobSpecArgs {
  // Set: the dataset is these shards (path or URL) and the synthetic fields are ignored.
  std::string manifest;
  // Set (and no manifest): the dataset is these shard files or globs, stoker shards or
  // WebDataset tars (ShardDataset.paths); the synthetic fields are ignored.
  std::vector<std::string> paths;
  // Synthetic images: num_samples (> 0) of height × width × channels (1 or 3), label = index
  // mod num_classes.
  uint64_t num_samples = 0;
  uint32_t height = 224;
  uint32_t width = 224;
  uint32_t channels = 3;
  uint32_t num_classes = 1000;
  std::string pipeline;
  // "hwc" or "chw"; "auto", "uint8", "float32", "float16" or "bfloat16" (DTypeFromName).
  std::string layout = "chw";
  std::string dtype = "auto";
  // Where the pipeline's to_float/normalize tail runs (JobSpec.tail): "auto" (the coordinator
  // places it on the client when the pipeline splits and the program can run it), "worker" or
  // "client".
  std::string tail = "auto";
  uint32_t batch_size = 64;
  uint32_t world_size = 1;
  uint32_t epochs = 1;
  uint64_t seed = 0;
  // "none", "global", "block" (with shuffle_block > 0) or "shard_window" (a manifest dataset;
  // windows of shuffle_window_shards shards, docs/storage.md).
  std::string shuffle = "global";
  uint32_t shuffle_block = 1024;
  uint32_t shuffle_window_shards = 16;
  // JobSpec.sweep_seed: jobs of a sweep sharing it read the same blocks or shard windows in step
  // (shuffle "block" or "shard_window"; docs/decisions/0087-sweep-aligned-orders.md); 0: off.
  uint64_t sweep_seed = 0;
  bool drop_last = false;
  // JobSpec.max_bad_sample_fraction, in [0, 1]; unset: the coordinator's default (0.01).
  std::optional<double> max_bad_sample_fraction;
  // JobSpec.fields: the sample fields the job wants ("image", "label", "text", ...); empty:
  // images and labels as before. Checked by OpenJob (INVALID_ARGUMENT naming fields[i]).
  std::vector<std::string> fields;
  // JobSpec.decoded_cache (docs/decisions/0081-decoded-cache.md, 0084): "auto" (each worker
  // chooses from measured costs), "on", "off", "always" (forced on, every sample kept whatever its
  // decode cost), or empty for unset (auto).
  std::string decoded_cache;

  // The spec, or INVALID_ARGUMENT naming the argument as `name(field)` says (field is the
  // member's name, e.g. "batch_size"; a command line answers "--batch-size").
  absl::StatusOr<v1::JobSpec> ToJobSpec(
      absl::FunctionRef<std::string(absl::string_view field)> name) const;
};

}  // namespace stoker

#endif  // STOKER_JOBSPEC_JOB_SPEC_ARGS_H_
