#ifndef STOKER_DATA_SHARD_READER_H_
#define STOKER_DATA_SHARD_READER_H_

// Reading stoker shards (data/shard_format.h) through a RandomAccessFile.
//
// LoadStokerShardIndex reads the trailer and the index: two reads, then every record is one read.
// When the trailer or index is missing or damaged (a truncated or partly overwritten file), it
// recovers instead: it scans records from the start and keeps every one whose header is whole and
// whose length fits, stopping at the first that does not. The index then says where the damage
// is; samples past it are lost (callers report them as bad samples, reason kReadError). The scan
// happens once per open shard and never loops: each step moves forward by a whole record.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "data/storage.h"

namespace stoker {

// Where one sample lives in its shard. Stoker shards: the whole record (header included); the
// label is in the record. Tar shards (data/tar_reader.h): the image file's bytes and its label.
struct SampleLocation {
  uint64_t offset = 0;
  uint32_t length = 0;
  int64_t label = -1;
};

// Where one pass-through field's value lives in a tar shard (data/tar_reader.h); offset kAbsent
// when the sample has no such file.
struct FieldLocation {
  static constexpr uint64_t kAbsent = UINT64_MAX;
  uint64_t offset = kAbsent;
  uint64_t length = 0;
};

// The samples of one shard that can be reached. Thread-compatible value type.
struct ShardIndex {
  std::vector<SampleLocation> samples;
  // Tar shards indexed for pass-through fields: field_count locations per sample, field f of
  // sample s at fields[s * field_count + f]. Empty otherwise (stoker shards keep their fields in
  // the records, data/record_fields.h).
  uint32_t field_count = 0;
  std::vector<FieldLocation> fields;
  // Empty for an intact shard; otherwise what was wrong, e.g. "no valid trailer; recovered 12
  // records, damage at offset 4096".
  std::string damage;
};

// Errors: those of the file (NOT_FOUND, UNAVAILABLE, ...). Damage is not an error (see above).
absl::StatusOr<ShardIndex> LoadStokerShardIndex(const RandomAccessFile& file);

// One parsed record; the views point into the bytes given to ParseRecord.
struct RecordView {
  absl::string_view key;
  absl::string_view metadata;
  int64_t label = 0;
  size_t data_offset = 0;  // Of the data inside the record's bytes.
  size_t data_size = 0;
};

// Checks the magic, length and CRC of `record` (header included) and splits its body.
// A bad-sample error (common/bad_sample.h, reason kCorruptRecord) when any of them is wrong.
absl::Status ParseRecord(absl::Span<const uint8_t> record, RecordView* view);

}  // namespace stoker

#endif  // STOKER_DATA_SHARD_READER_H_
