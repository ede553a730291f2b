#ifndef STOKER_DATA_SHARD_SOURCE_H_
#define STOKER_DATA_SHARD_SOURCE_H_

// A Source of encoded images stored in shards (stoker shards or WebDataset tars, local or over
// HTTP). Sample indices run through the shards in order: shard 0 holds 0..n0-1, shard 1 the next
// n1, and so on. The record counts come from the manifest (cheap: the coordinator learns N without
// touching a shard) or, for a plain list of shards, from opening each one.
//
// Each shard is opened on first use through the OpenShardPool it is handed (data/dataset_io.h),
// which keeps the most recently used shards open and indexed, shared with the other jobs over
// the same shards, and closes the rest beyond its limits: what a source itself holds is O(shards)
// (each shard's location and the prefix sums of their record counts), never O(samples). A
// damaged shard (truncated, bad trailer) is recovered when opened (data/shard_reader.h) and
// logged; the samples past the damage then read as bad samples (reason kReadError), and a record
// whose CRC does not match as kCorruptRecord.
// Read fills SampleBuffer.encoded with the image bytes, SampleBuffer.label and
// SampleBuffer.fields (the fields asked for: a tar's files of those extensions,
// data/tar_reader.h; a stoker record's metadata, data/record_fields.h, typed targets included),
// reusing the buffer's capacity: no allocation per sample once warm. A sample without one of the
// fields is a bad sample (kMissingField), one whose value is over MaxStoredFieldValueBytes
// (common/field_limits.h) too (kTooLarge). Typed targets come from stoker records only:
// CheckField refuses them for a dataset with WebDataset shards.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset_io.h"
#include "data/open_shards.h"
#include "data/source.h"
#include "data/storage.h"

namespace stoker {

// A shard and the number of samples it should hold.
struct ShardRef {
  std::string location;
  uint64_t records = 0;
  uint64_t bytes = 0;  // File size; 0 when not known.
};

// Thread-safe.
class ShardSource : public Source {
 public:
  // Reads the manifest, or opens every listed shard (globs expanded) to count its samples, through
  // `io`, which the source keeps to read its shards.
  // Errors keep the storage's code (NOT_FOUND or UNAVAILABLE naming the file or URL; those of
  // ReadManifest) and start with the field, "dataset.shards.manifest: " or
  // "dataset.shards.paths: "; INVALID_ARGUMENT when the dataset holds no sample.
  // `random_order`: the job reads samples in a global random order (SHUFFLE_MODE_GLOBAL): when
  // the shards are larger in all than the storage's shard cache, remote shards are then read
  // with ranged GETs of the records (RemoteReads::kRanged) instead of whole-shard downloads that
  // the cache would evict before their next use (docs/storage.md).
  // `fields`: the fields Read fills, pass-through and typed (SourceFields, data/sample_fields.h).
  static absl::StatusOr<std::unique_ptr<ShardSource>> Open(const stoker::v1::ShardDataset& spec,
                                                           const DatasetIo& io,
                                                           bool random_order = false,
                                                           std::vector<std::string> fields = {});

  // REQUIRES: io.storage and io.shards are set. `declared_fields`: the manifest's fields when it
  // lists only stoker shards (CheckField refuses others), nullopt when any field may be there.
  ShardSource(std::vector<ShardRef> shards, std::vector<std::string> class_names, DatasetIo io,
              RemoteReads reads = RemoteReads::kWholeShard, std::vector<std::string> fields = {},
              std::optional<std::vector<std::string>> declared_fields = std::nullopt);

  uint64_t size() const override { return starts_.back(); }
  absl::Span<const uint64_t> shard_starts() const override { return starts_; }
  InputFormat format() const override { return InputFormat::Encoded(); }
  // Errors: OUT_OF_RANGE past the end; bad-sample errors (see above); the storage's errors when
  // a shard cannot be opened or read (UNAVAILABLE: try again later).
  absl::Status Read(uint64_t index, SampleBuffer* sample) const override;
  // "shard-00003.stoker offset 1048576", or "shard-00003.stoker record 17" when the record's
  // offset is not known.
  std::string Locate(uint64_t index) const override;
  // A manifest of stoker shards only: the fields it declares (ShardManifest.fields); otherwise
  // any name (a tar may carry any key, shards listed by path any field in their records).
  absl::Status CheckField(absl::string_view name) const override;
  // From the shard list (the manifest's, or the paths opened): each shard's location, record
  // count and size in bytes (manifests carry no checksums; a shard rewritten in place with the
  // same name, count and size would not be told apart).
  uint64_t fingerprint() const override { return fingerprint_; }

  const std::vector<ShardRef>& shards() const { return shards_; }
  const std::vector<std::string>& class_names() const { return class_names_; }

 private:
  // The shard holding `index` and the record number inside it. REQUIRES: index < size().
  std::pair<size_t, uint64_t> Find(uint64_t index) const;
  // Shard `s`, open while the result is held.
  absl::StatusOr<std::shared_ptr<const OpenShard>> Load(size_t s) const;
  absl::Status ReadRecord(const OpenShard& shard, uint64_t record, SampleBuffer* sample) const;
  // The pass-through fields of a tar sample from the shard's index.
  absl::Status ReadTarFields(const OpenShard& shard, uint64_t record, SampleBuffer* sample) const;
  // The pass-through fields of a stoker record from its metadata.
  absl::Status ReadRecordFields(absl::string_view metadata, SampleBuffer* sample) const;

  const std::vector<ShardRef> shards_;
  const std::vector<std::string> class_names_;
  uint64_t fingerprint_ = 0;
  std::vector<uint64_t> starts_;  // starts_[s]: first index of shard s; back() = size().
  // Opens the shards; its storage counts the bytes of the samples read (read amplification,
  // data/storage_backend.h).
  const DatasetIo io_;
  const RemoteReads reads_;
  const std::vector<std::string> fields_;
  const std::optional<std::vector<std::string>> declared_fields_;
  // The tar extension of each field (WebDatasetExtension).
  std::vector<std::string> tar_extensions_;
};

}  // namespace stoker

#endif  // STOKER_DATA_SHARD_SOURCE_H_
