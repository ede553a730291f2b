#include "data/source.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/target_fields.h"
#include "data/sample_fields.h"
#include "data/shard_source.h"
#include "data/synthetic_source.h"

namespace stoker {
namespace {

// Larger images than this per sample are refused: they would not fit any sane batch.
constexpr uint64_t kMaxSyntheticPixels = uint64_t{1} << 26;
// Epoch plans compute positions on demand (O(1) memory); the bound only keeps plan positions
// (about 2N plus a few batches) and sample counts far from 64-bit overflow.
constexpr uint64_t kMaxSamples = uint64_t{1} << 48;

}  // namespace

absl::Status ValidateDatasetSpec(const stoker::v1::DatasetSpec& spec) {
  switch (spec.source_case()) {
    case stoker::v1::DatasetSpec::kSynthetic: {
      const stoker::v1::SyntheticSource& s = spec.synthetic();
      if (s.num_samples() == 0) {
        return absl::InvalidArgumentError("dataset.synthetic.num_samples: must be > 0");
      }
      if (s.num_samples() > kMaxSamples) {
        return absl::InvalidArgumentError("dataset.synthetic.num_samples: must be at most 2^48");
      }
      if (s.height() == 0)
        return absl::InvalidArgumentError("dataset.synthetic.height: must be > 0");
      if (s.width() == 0) return absl::InvalidArgumentError("dataset.synthetic.width: must be > 0");
      if (s.channels() != 1 && s.channels() != 3) {
        return absl::InvalidArgumentError("dataset.synthetic.channels: must be 1 or 3");
      }
      if (uint64_t{s.height()} * s.width() > kMaxSyntheticPixels) {
        return absl::InvalidArgumentError(
            "dataset.synthetic: height * width must be at most 2^26 pixels");
      }
      if (s.num_classes() == 0) {
        return absl::InvalidArgumentError("dataset.synthetic.num_classes: must be > 0");
      }
      return absl::OkStatus();
    }
    case stoker::v1::DatasetSpec::kShards: {
      const stoker::v1::ShardDataset& s = spec.shards();
      if (s.manifest().empty() == (s.paths_size() == 0)) {
        return absl::InvalidArgumentError("dataset.shards: set exactly one of manifest and paths");
      }
      for (int i = 0; i < s.paths_size(); ++i) {
        if (s.paths(i).empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("dataset.shards.paths[", i, "]: must not be empty"));
        }
      }
      return absl::OkStatus();
    }
    case stoker::v1::DatasetSpec::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("dataset: no source set (expected one of: synthetic, shards)");
}

absl::Status Source::CheckField(absl::string_view name) const {
  return absl::InvalidArgumentError(
      absl::StrCat("\"", name, "\": this dataset's samples have only \"image\" and \"label\"",
                   IsTargetField(name) ? absl::StrCat(" (", kTypedTargetsSource, ")") : ""));
}

absl::StatusOr<std::unique_ptr<Source>> CreateSource(const stoker::v1::DatasetSpec& spec,
                                                     uint64_t seed, const DatasetIo& io,
                                                     bool random_order,
                                                     std::vector<std::string> fields) {
  RETURN_IF_ERROR(ValidateDatasetSpec(spec));
  if (spec.has_synthetic()) {
    if (!fields.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fields: a synthetic dataset has only \"image\" and \"label\", not \"", fields[0], "\"",
          IsTargetField(fields[0]) ? absl::StrCat(" (", kTypedTargetsSource, ")") : ""));
    }
    return std::unique_ptr<Source>(new SyntheticSource(spec.synthetic(), seed));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ShardSource> source,
                   ShardSource::Open(spec.shards(), io, random_order, std::move(fields)));
  if (source->size() > kMaxSamples) {
    return absl::InvalidArgumentError(
        absl::StrCat("dataset.shards: ", source->size(), " samples; at most 2^48"));
  }
  return std::unique_ptr<Source>(std::move(source));
}

absl::Status CheckJobFields(const stoker::v1::JobSpec& spec, const Source& source) {
  RETURN_IF_ERROR(SourceFields(spec).status());
  for (int i = 0; i < spec.fields_size(); ++i) {
    const std::string& name = spec.fields(i);
    if (name == kImageField || name == kLabelField) continue;
    RETURN_IF_ERROR(PrefixStatus(absl::StrCat("fields[", i, "]: "), source.CheckField(name)));
  }
  return absl::OkStatus();
}

}  // namespace stoker
