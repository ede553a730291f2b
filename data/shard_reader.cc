#include "data/shard_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/byte_codec.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "data/shard_format.h"

namespace stoker {

using namespace shard_format;  // NOLINT: the format's constants.

namespace {

bool MagicIs(absl::Span<const uint8_t> bytes, const char (&magic)[8]) {
  return bytes.size() == sizeof(magic) && std::memcmp(bytes.data(), magic, sizeof(magic)) == 0;
}

// Fills `index` from the index bytes (after its magic) of a shard whose records lie before
// `index_offset`: true, or false (index left empty) when an entry points outside them.
bool ReadIndexEntries(ByteReader entries, uint64_t count, uint64_t index_offset,
                      ShardIndex* index) {
  index->samples.resize(count);
  for (SampleLocation& location : index->samples) {
    if (!entries.Read(&location.offset) || !entries.Read(&location.length) ||
        location.offset < kFileHeaderSize || location.length < kRecordHeaderSize ||
        location.offset > index_offset || location.length > index_offset - location.offset) {
      index->samples.clear();
      return false;
    }
  }
  return true;
}

// Fills `index` from the trailer: true, or false (index left empty) when it is unusable.
absl::StatusOr<bool> TryTrailerIndex(const RandomAccessFile& file, ShardIndex* index) {
  const uint64_t size = file.size();
  if (size < kFileHeaderSize + 4 + kTrailerSize) return false;
  uint8_t trailer_bytes[kTrailerSize];
  RETURN_IF_ERROR(file.ReadAt(size - kTrailerSize, kTrailerSize, trailer_bytes));
  ByteReader trailer(trailer_bytes);
  uint64_t index_offset = 0, count = 0;
  uint32_t index_crc = 0, version = 0;
  absl::Span<const uint8_t> magic;
  if (!trailer.Read(&index_offset) || !trailer.Read(&count) || !trailer.Read(&index_crc) ||
      !trailer.Read(&version) || !trailer.ReadBytes(sizeof(kTrailerMagic), &magic) ||
      !MagicIs(magic, kTrailerMagic)) {
    return false;
  }
  const uint64_t index_end = size - kTrailerSize;
  if (version != kVersion || index_offset < kFileHeaderSize || index_offset > index_end ||
      index_end - index_offset < 4 || (index_end - index_offset - 4) / kIndexEntrySize != count ||
      (index_end - index_offset - 4) % kIndexEntrySize != 0) {
    return false;
  }
  std::vector<uint8_t> bytes(index_end - index_offset);
  RETURN_IF_ERROR(file.ReadAt(index_offset, bytes.size(), bytes.data()));
  ByteReader entries(bytes);
  uint32_t index_magic = 0;
  if (Crc32c(bytes.data(), bytes.size()) != index_crc || !entries.Read(&index_magic) ||
      index_magic != kIndexMagic) {
    return false;
  }
  return ReadIndexEntries(entries, count, index_offset, index);
}

// Recovery: whole records from the start, up to the first damage.
absl::Status ScanRecords(const RandomAccessFile& file, ShardIndex* index) {
  const uint64_t size = file.size();
  uint64_t offset = kFileHeaderSize;
  uint8_t header_bytes[kRecordHeaderSize];
  while (offset + kRecordHeaderSize <= size) {
    RETURN_IF_ERROR(file.ReadAt(offset, kRecordHeaderSize, header_bytes));
    ByteReader header(header_bytes);
    uint32_t magic = 0, body = 0;
    if (!header.Read(&magic) || !header.Read(&body) || magic != kRecordMagic ||
        body < kBodyPrefixSize || body > kMaxRecordBody ||
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
  uint8_t header_bytes[kFileHeaderSize];
  if (file.size() < kFileHeaderSize) {
    index.damage = absl::StrCat("file of ", file.size(), " bytes has no shard header");
    return index;
  }
  RETURN_IF_ERROR(file.ReadAt(0, kFileHeaderSize, header_bytes));
  ByteReader header(header_bytes);
  absl::Span<const uint8_t> magic;
  uint32_t version = 0;
  if (!header.ReadBytes(sizeof(kFileMagic), &magic) || !header.Read(&version) ||
      !MagicIs(magic, kFileMagic) || version != kVersion) {
    index.damage = "not a stoker shard (bad magic or version in the file header)";
    return index;
  }
  ASSIGN_OR_RETURN(bool intact, TryTrailerIndex(file, &index));
  if (!intact) RETURN_IF_ERROR(ScanRecords(file, &index));
  return index;
}

absl::Status ParseRecord(absl::Span<const uint8_t> record, RecordView* view) {
  ByteReader header(record);
  uint32_t magic = 0, body_size = 0;
  if (record.size() < kRecordHeaderSize + kBodyPrefixSize || !header.Read(&magic) ||
      magic != kRecordMagic || !header.Read(&body_size) ||
      body_size != record.size() - kRecordHeaderSize) {
    return BadSampleError(BadSampleReason::kCorruptRecord, "bad record header");
  }
  // The record is exactly one frame after its magic, so a crc mismatch is all that can fail.
  absl::Span<const uint8_t> body;
  if (!ReadFrame(FrameChecksum::kPayload, record.subspan(4), body_size, &body).ok()) {
    return BadSampleError(BadSampleReason::kCorruptRecord, "record CRC mismatch");
  }
  ByteReader prefix(body);
  uint16_t key_size = 0;
  uint32_t meta_size = 0;
  uint64_t label = 0;
  if (!prefix.Read(&key_size) || !prefix.Read(&meta_size) || !prefix.Read(&label) ||
      kBodyPrefixSize + size_t{key_size} + meta_size > body.size()) {
    return BadSampleError(BadSampleReason::kCorruptRecord, "record key/metadata overrun");
  }
  view->label = static_cast<int64_t>(label);
  const char* text = reinterpret_cast<const char*>(body.data() + kBodyPrefixSize);
  view->key = absl::string_view(text, key_size);
  view->metadata = absl::string_view(text + key_size, meta_size);
  view->data_offset = kRecordHeaderSize + kBodyPrefixSize + key_size + meta_size;
  view->data_size = record.size() - view->data_offset;
  return absl::OkStatus();
}

}  // namespace stoker
