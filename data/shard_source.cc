#include "data/shard_source.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/bad_sample.h"
#include "common/logging.h"
#include "common/stable_fingerprint.h"
#include "common/status_macros.h"
#include "common/target_fields.h"
#include "data/manifest.h"
#include "data/record_fields.h"
#include "data/sample_fields.h"
#include "data/shard_cache.h"
#include "data/storage_backend.h"
#include "data/tar_reader.h"

namespace stoker {
namespace {

absl::StatusOr<ShardIndex> LoadIndex(const RandomAccessFile& file, bool tar) {
  return tar ? LoadTarShardIndex(file) : LoadStokerShardIndex(file);
}

// A bad sample when the field is missing or over MaxStoredFieldValueBytes.
absl::Status CheckFieldValue(const std::string& field, bool found, uint64_t size) {
  if (!found) {
    return BadSampleError(BadSampleReason::kMissingField, absl::StrCat("no \"", field, "\" field"));
  }
  if (size > MaxStoredFieldValueBytes(field)) {
    return BadSampleError(BadSampleReason::kTooLarge,
                          absl::StrCat("field \"", field, "\" of ", size, " bytes (at most ",
                                       MaxStoredFieldValueBytes(field), ")"));
  }
  return absl::OkStatus();
}

std::string BaseName(const std::string& location) {
  const size_t slash = location.rfind('/');
  return slash == std::string::npos ? location : location.substr(slash + 1);
}

// Expands the globs of `paths` and opens every shard to count its samples.
absl::StatusOr<std::vector<ShardRef>> CountShards(const Storage& storage,
                                                  const std::vector<std::string>& paths) {
  ASSIGN_OR_RETURN(std::vector<std::string> locations, ExpandShardPaths(storage, paths));
  std::vector<ShardRef> shards;
  for (const std::string& location : locations) {
    ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, storage.Open(location));
    ASSIGN_OR_RETURN(ShardIndex index, LoadIndex(*file, IsTarShard(location)));
    if (!index.damage.empty()) {
      STOKER_LOG(WARNING) << location << ": " << index.damage;
    }
    shards.push_back(ShardRef{location, index.samples.size(), file->size()});
  }
  return shards;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ShardSource>> ShardSource::Open(const stoker::v1::ShardDataset& spec,
                                                               const DatasetIo& io,
                                                               bool random_order,
                                                               std::vector<std::string> fields) {
  const Storage& storage = *io.storage;
  std::vector<ShardRef> shards;
  std::vector<std::string> class_names;
  std::optional<std::vector<std::string>> declared_fields;
  if (!spec.manifest().empty()) {
    absl::StatusOr<stoker::v1::ShardManifest> read = ReadManifest(storage, spec.manifest());
    if (!read.ok()) return PrefixStatus("dataset.shards.manifest: ", read.status());
    const stoker::v1::ShardManifest& manifest = *read;
    for (const stoker::v1::ManifestShard& shard : manifest.shards()) {
      shards.push_back(ShardRef{ResolveShardLocation(spec.manifest(), shard.path()),
                                shard.records(), shard.bytes()});
    }
    class_names.assign(manifest.class_names().begin(), manifest.class_names().end());
    const bool any_tar = std::any_of(shards.begin(), shards.end(), [](const ShardRef& shard) {
      return IsTarShard(shard.location);
    });
    if (!any_tar) declared_fields.emplace(manifest.fields().begin(), manifest.fields().end());
  } else {
    const std::vector<std::string> paths(spec.paths().begin(), spec.paths().end());
    absl::StatusOr<std::vector<ShardRef>> counted = CountShards(storage, paths);
    if (!counted.ok()) return PrefixStatus("dataset.shards.paths: ", counted.status());
    shards = *std::move(counted);
  }
  uint64_t total = 0, bytes = 0;
  for (const ShardRef& shard : shards) {
    bytes += shard.bytes;
    if (shard.records > std::numeric_limits<uint64_t>::max() - total) {
      return absl::InvalidArgumentError("dataset.shards: the record counts overflow 64 bits");
    }
    total += shard.records;
  }
  if (total == 0) return absl::InvalidArgumentError("dataset.shards: the shards hold no samples");
  const ShardCache* cache = storage.cache();
  const bool ranged = random_order && cache != nullptr && bytes > cache->options().max_bytes;
  return std::make_unique<ShardSource>(std::move(shards), std::move(class_names), io,
                                       ranged ? RemoteReads::kRanged : RemoteReads::kWholeShard,
                                       std::move(fields), std::move(declared_fields));
}

ShardSource::ShardSource(std::vector<ShardRef> shards, std::vector<std::string> class_names,
                         DatasetIo io, RemoteReads reads, std::vector<std::string> fields,
                         std::optional<std::vector<std::string>> declared_fields)
    : shards_(std::move(shards)),
      class_names_(std::move(class_names)),
      io_(std::move(io)),
      reads_(reads),
      fields_(std::move(fields)),
      declared_fields_(std::move(declared_fields)) {
  for (const std::string& field : fields_) tar_extensions_.push_back(WebDatasetExtension(field));
  starts_.reserve(shards_.size() + 1);
  starts_.push_back(0);
  for (const ShardRef& shard : shards_) starts_.push_back(starts_.back() + shard.records);
  StableFingerprint fingerprint;
  fingerprint.Add("stoker shards").Add(shards_.size());
  for (const ShardRef& shard : shards_) {
    fingerprint.Add(shard.location).Add(shard.records).Add(shard.bytes);
  }
  fingerprint_ = fingerprint.value();
}

std::pair<size_t, uint64_t> ShardSource::Find(uint64_t index) const {
  // The last start <= index, skipping empty shards.
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), index);
  const size_t s = static_cast<size_t>(it - starts_.begin()) - 1;
  return {s, index - starts_[s]};
}

absl::StatusOr<std::shared_ptr<const OpenShard>> ShardSource::Load(size_t s) const {
  static const std::vector<std::string> kNoFields;
  const std::string& location = shards_[s].location;
  // Stoker records carry their fields: only a tar's index depends on them.
  return io_.shards->Get(*io_.storage, location, shards_[s].records, reads_,
                         IsTarShard(location) ? tar_extensions_ : kNoFields);
}

absl::Status ShardSource::Read(uint64_t index, SampleBuffer* sample) const {
  if (index >= size()) {
    return absl::OutOfRangeError(absl::StrCat("sample ", index, " of ", size()));
  }
  const auto [s, record] = Find(index);
  ASSIGN_OR_RETURN(const std::shared_ptr<const OpenShard> shard, Load(s));
  if (record >= shard->index.samples.size()) {
    return BadSampleError(
        BadSampleReason::kReadError,
        absl::StrCat(BaseName(shards_[s].location), " record ", record, " is missing (",
                     shard->index.damage.empty() ? "shard too short" : shard->index.damage, ")"));
  }
  absl::Status status = ReadRecord(*shard, record, sample);
  if (status.ok()) return status;  // No message built on the hot path.
  return PrefixStatus(absl::StrCat(BaseName(shards_[s].location), " record ", record, ": "),
                      status);
}

absl::Status ShardSource::ReadRecord(const OpenShard& shard, uint64_t record,
                                     SampleBuffer* sample) const {
  const SampleLocation& location = shard.index.samples[record];
  sample->encoded.resize(location.length);  // Keeps capacity: no allocation once warm.
  absl::Status read = shard.file->ReadAt(location.offset, location.length, sample->encoded.data());
  if (read.code() == absl::StatusCode::kOutOfRange) {
    return BadSampleError(BadSampleReason::kReadError, std::string(read.message()));
  }
  RETURN_IF_ERROR(read);
  io_.storage->CountSampleBytes(location.length);
  sample->fields.resize(fields_.size());
  if (shard.tar) {
    sample->label = location.label;
    return ReadTarFields(shard, record, sample);
  }
  RecordView view;
  RETURN_IF_ERROR(ParseRecord(sample->encoded, &view));
  sample->label = view.label;
  // Before the memmove below overwrites the metadata.
  RETURN_IF_ERROR(ReadRecordFields(view.metadata, sample));
  std::memmove(sample->encoded.data(), sample->encoded.data() + view.data_offset, view.data_size);
  sample->encoded.resize(view.data_size);
  return absl::OkStatus();
}

absl::Status ShardSource::CheckField(absl::string_view name) const {
  const bool any_tar = std::any_of(shards_.begin(), shards_.end(), [](const ShardRef& shard) {
    return IsTarShard(shard.location);
  });
  // A WebDataset holds a semantic mask in the stored form (its .seg.png), no other typed target.
  if (IsTargetField(name) && name != kSemanticMaskField && any_tar) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name, "\": the dataset has WebDataset shards; ", kTypedTargetsSource));
  }
  if (!declared_fields_.has_value() || std::find(declared_fields_->begin(), declared_fields_->end(),
                                                 name) != declared_fields_->end()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", name, "\": the manifest's records carry ",
                   declared_fields_->empty()
                       ? "no fields"
                       : absl::StrCat("only [", absl::StrJoin(*declared_fields_, ", "), "]"),
                   " (stoker-pack --captions stores \"text\"; --coco the typed targets)"));
}

absl::Status ShardSource::ReadTarFields(const OpenShard& shard, uint64_t record,
                                        SampleBuffer* sample) const {
  for (size_t f = 0; f < fields_.size(); ++f) {
    const FieldLocation& location = shard.index.fields[record * shard.index.field_count + f];
    RETURN_IF_ERROR(
        CheckFieldValue(fields_[f], location.offset != FieldLocation::kAbsent, location.length));
    std::vector<uint8_t>& value = sample->fields[f];
    value.resize(location.length);
    absl::Status read = shard.file->ReadAt(location.offset, location.length, value.data());
    if (read.code() == absl::StatusCode::kOutOfRange) {
      return BadSampleError(BadSampleReason::kReadError, std::string(read.message()));
    }
    RETURN_IF_ERROR(read);
    io_.storage->CountSampleBytes(location.length);
  }
  return absl::OkStatus();
}

absl::Status ShardSource::ReadRecordFields(absl::string_view metadata, SampleBuffer* sample) const {
  for (size_t f = 0; f < fields_.size(); ++f) {
    absl::Span<const uint8_t> value;
    ASSIGN_OR_RETURN(const bool found, FindRecordField(metadata, fields_[f], &value));
    RETURN_IF_ERROR(CheckFieldValue(fields_[f], found, value.size()));
    sample->fields[f].assign(value.begin(), value.end());
  }
  return absl::OkStatus();
}

std::string ShardSource::Locate(uint64_t index) const {
  if (index >= size()) return absl::StrCat("sample ", index, " (past the end)");
  const auto [s, record] = Find(index);
  const std::string name = BaseName(shards_[s].location);
  absl::StatusOr<std::shared_ptr<const OpenShard>> shard = Load(s);
  if (shard.ok() && record < (*shard)->index.samples.size()) {
    return absl::StrCat(name, " offset ", (*shard)->index.samples[record].offset);
  }
  return absl::StrCat(name, " record ", record);
}

}  // namespace stoker
