#ifndef STOKER_DATA_SAMPLE_FIELDS_H_
#define STOKER_DATA_SAMPLE_FIELDS_H_

// The named fields of a sample (docs/architecture.md, "Sample fields";
// docs/decisions/0064-named-sample-fields.md, 0068-typed-targets-on-the-wire.md). A job names the
// fields it wants in JobSpec.fields: "image" (the pipeline's tensor), "label" (the class),
// pass-through fields, whose bytes travel untouched from the source to the trainer: "text" (a
// WebDataset .txt), "json" (a .json), or any other WebDataset key under its extension
// ("seg.png"); and typed targets ("boxes", "box_labels", "masks", "keypoints", "semantic_mask";
// common/target_fields.h), which the worker moves with the image. Stoker shards keep both kinds
// in their records' metadata under the same names (data/record_fields.h); a source reads them
// alike.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/field_limits.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

inline constexpr absl::string_view kTextField = "text";
inline constexpr absl::string_view kJsonField = "json";

// Why a source that is not stoker shards cannot serve a typed target, for its error messages.
inline constexpr absl::string_view kTypedTargetsSource =
    "typed targets come from stoker shards packed with them (stoker-pack --coco); "
    "\"semantic_mask\" from either, a WebDataset's .seg.png";

// The longest field name. A value over MaxStoredFieldValueBytes (common/field_limits.h) is a bad
// sample (kTooLarge), so that a batch's size stays bounded.
inline constexpr size_t kMaxFieldNameBytes = 64;

// Checks spec.fields and returns the fields a source reads (all but "image" and "label":
// pass-through fields and typed targets), in the job's order. Empty fields: none.
// INVALID_ARGUMENT "fields[i]: ..." for a name that is empty, too long, not lowercase
// [a-z0-9._-], named twice, a WebDataset key that has a field name ("txt": ask for "text"; "cls":
// ask for "label"), "box_labels" without "boxes" (labels belong to boxes); "fields: ..." when
// fields are named without "image" or more than kMaxJobFields are.
absl::StatusOr<std::vector<std::string>> SourceFields(const stoker::v1::JobSpec& spec);

// True when spec.fields names a typed target (common/target_fields.h): the job's pipeline is then
// compiled with targets (PipelineOptions::with_targets) by the coordinator and the workers alike.
bool NamesTypedTargets(const stoker::v1::JobSpec& spec);

// The WebDataset key extension a field is read from: "txt" for "text", "seg.png" for the typed
// target "semantic_mask" (the label map's PNG is its stored form), the name itself otherwise.
std::string WebDatasetExtension(absl::string_view field);

}  // namespace stoker

#endif  // STOKER_DATA_SAMPLE_FIELDS_H_
