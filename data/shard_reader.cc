#include "data/shard_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "data/shard_format.h"

namespace stoker {

using namespace shard_format;  // NOLINT: the format's constants and byte helpers.

namespace {

// Fills `index` from the trailer: true, or false (index left empty) when it is unusable.
absl::StatusOr<bool> TryTrailerIndex(const RandomAccessFile& file, ShardIndex* index) {
  const uint64_t size = file.size();
  if (size < kFileHeaderSize + 4 + kTrailerSize) return false;
  uint8_t trailer[kTrailerSize];
  RETURN_IF_ERROR(file.ReadAt(size - kTrailerSize, kTrailerSize, trailer));
  if (std::memcmp(trailer + 24, kTrailerMagic, 8) != 0) return false;
  const uint64_t index_offset = Get64(trailer);
  const uint64_t count = Get64(trailer + 8);
  const uint64_t index_end = size - kTrailerSize;
  if (Get32(trailer + 20) != kVersion || index_offset < kFileHeaderSize ||
      index_offset > index_end || index_end - index_offset < 4 ||
      (index_end - index_offset - 4) / kIndexEntrySize != count ||
      (index_end - index_offset - 4) % kIndexEntrySize != 0) {
    return false;
  }
  std::vector<uint8_t> bytes(index_end - index_offset);
  RETURN_IF_ERROR(file.ReadAt(index_offset, bytes.size(), bytes.data()));
  if (Crc32c(bytes.data(), bytes.size()) != Get32(trailer + 16) ||
      Get32(bytes.data()) != kIndexMagic) {
    return false;
  }
  index->samples.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    SampleLocation& location = index->samples[i];
    location.offset = Get64(bytes.data() + 4 + i * kIndexEntrySize);
    location.length = Get32(bytes.data() + 12 + i * kIndexEntrySize);
    if (location.offset < kFileHeaderSize || location.length < kRecordHeaderSize ||
        location.offset > index_offset || location.length > index_offset - location.offset) {
      index->samples.clear();
      return false;
    }
  }
  return true;
}

// Recovery: whole records from the start, up to the first damage.
absl::Status ScanRecords(const RandomAccessFile& file, ShardIndex* index) {
  const uint64_t size = file.size();
  uint64_t offset = kFileHeaderSize;
  uint8_t header[kRecordHeaderSize];
  while (offset + kRecordHeaderSize <= size) {
    RETURN_IF_ERROR(file.ReadAt(offset, kRecordHeaderSize, header));
    const uint32_t body = Get32(header + 4);
    if (Get32(header) != kRecordMagic || body < kBodyPrefixSize || body > kMaxRecordBody ||
        offset + kRecordHeaderSize + body > size) {
      break;
    }
    index->samples.push_back(
        SampleLocation{offset, static_cast<uint32_t>(kRecordHeaderSize + body)});
    offset += kRecordHeaderSize + body;
  }
  index->damage = absl::StrCat("no valid trailer; recovered ", index->samples.size(),
                               " records, damage at offset ", offset);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShardIndex> LoadStokerShardIndex(const RandomAccessFile& file) {
  ShardIndex index;
  uint8_t header[kFileHeaderSize];
  if (file.size() < kFileHeaderSize) {
    index.damage = absl::StrCat("file of ", file.size(), " bytes has no shard header");
    return index;
  }
  RETURN_IF_ERROR(file.ReadAt(0, kFileHeaderSize, header));
  if (std::memcmp(header, kFileMagic, 8) != 0 || Get32(header + 8) != kVersion) {
    index.damage = "not a stoker shard (bad magic or version in the file header)";
    return index;
  }
  ASSIGN_OR_RETURN(bool intact, TryTrailerIndex(file, &index));
  if (!intact) RETURN_IF_ERROR(ScanRecords(file, &index));
  return index;
}

absl::Status ParseRecord(absl::Span<const uint8_t> record, RecordView* view) {
  if (record.size() < kRecordHeaderSize + kBodyPrefixSize || Get32(record.data()) != kRecordMagic ||
      Get32(record.data() + 4) != record.size() - kRecordHeaderSize) {
    return BadSampleError(BadSampleReason::kCorruptRecord, "bad record header");
  }
  const uint8_t* body = record.data() + kRecordHeaderSize;
  const size_t body_size = record.size() - kRecordHeaderSize;
  if (Crc32c(body, body_size) != Get32(record.data() + 8)) {
    return BadSampleError(BadSampleReason::kCorruptRecord, "record CRC mismatch");
  }
  const size_t key_size = body[0] | (size_t{body[1]} << 8);
  const size_t meta_size = Get32(body + 2);
  if (kBodyPrefixSize + key_size + meta_size > body_size) {
    return BadSampleError(BadSampleReason::kCorruptRecord, "record key/metadata overrun");
  }
  view->label = static_cast<int64_t>(Get64(body + 6));
  const char* text = reinterpret_cast<const char*>(body + kBodyPrefixSize);
  view->key = absl::string_view(text, key_size);
  view->metadata = absl::string_view(text + key_size, meta_size);
  view->data_offset = kRecordHeaderSize + kBodyPrefixSize + key_size + meta_size;
  view->data_size = record.size() - view->data_offset;
  return absl::OkStatus();
}

}  // namespace stoker
