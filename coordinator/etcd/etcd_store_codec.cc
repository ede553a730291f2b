#include "coordinator/etcd/etcd_store_codec.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/byte_codec.h"
#include "common/status_macros.h"
#include "coordinator/journal.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;

constexpr uint32_t kEtcdMetaPayloadBytes = 8 + 8 + 4 + 4 + 8;
constexpr char kEtcdLargeSuffix[] = ".large";

absl::Status EtcdKeyDamaged(absl::string_view key, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("etcd key ", key, ": ", what));
}

}  // namespace

std::string EtcdLogPrefix(absl::string_view prefix) { return absl::StrCat(prefix, "log/"); }

std::string EtcdLogKey(absl::string_view prefix, uint64_t first_sequence) {
  return absl::StrFormat("%slog/%020u", prefix, first_sequence);
}

std::string EtcdLargeRecordKey(absl::string_view prefix, uint64_t sequence) {
  return absl::StrCat(EtcdLogKey(prefix, sequence), kEtcdLargeSuffix);
}

std::string EtcdLargePrefix(absl::string_view prefix) { return absl::StrCat(prefix, "large/"); }

std::string EtcdLargePartsPrefix(absl::string_view prefix, uint64_t sequence) {
  return absl::StrFormat("%slarge/%020u/", prefix, sequence);
}

std::string EtcdLargePartKey(absl::string_view prefix, uint64_t sequence, size_t part) {
  return absl::StrFormat("%s%06u", EtcdLargePartsPrefix(prefix, sequence), part);
}

absl::StatusOr<uint64_t> ParseEtcdLogKey(absl::string_view prefix, absl::string_view key,
                                         bool* large) {
  const std::string log_prefix = EtcdLogPrefix(prefix);
  absl::string_view digits = key;
  uint64_t sequence = 0;
  *large = absl::ConsumeSuffix(&digits, kEtcdLargeSuffix);
  if (!absl::ConsumePrefix(&digits, log_prefix) || digits.size() != 20 ||
      !absl::SimpleAtoi(digits, &sequence) || sequence == 0) {
    return EtcdKeyDamaged(key, "not a log key (log/ and a 20-digit sequence from 1)");
  }
  return sequence;
}

std::string EtcdSnapMetaKey(absl::string_view prefix) { return absl::StrCat(prefix, "snap/meta"); }

std::string EtcdSnapPrefix(absl::string_view prefix) { return absl::StrCat(prefix, "snap/"); }

std::string EtcdSnapGenerationPrefix(absl::string_view prefix, uint64_t generation) {
  return absl::StrFormat("%ssnap/%020u/", prefix, generation);
}

std::string EtcdSnapChunkKey(absl::string_view prefix, uint64_t generation, size_t chunk) {
  return absl::StrFormat("%s%06u", EtcdSnapGenerationPrefix(prefix, generation), chunk);
}

etcdserverpb::RequestOp EtcdPutOp(std::string key, std::string value) {
  etcdserverpb::RequestOp op;
  op.mutable_request_put()->set_key(std::move(key));
  op.mutable_request_put()->set_value(std::move(value));
  return op;
}

etcdserverpb::RequestOp EtcdDeleteRangeOp(std::string key, std::string range_end) {
  etcdserverpb::RequestOp op;
  op.mutable_request_delete_range()->set_key(std::move(key));
  op.mutable_request_delete_range()->set_range_end(std::move(range_end));
  return op;
}

std::string EncodeEtcdSnapMeta(const EtcdSnapMeta& meta) {
  std::string payload;
  AppendLittleEndian(meta.generation, &payload);
  AppendLittleEndian(meta.through, &payload);
  AppendLittleEndian(meta.chunks, &payload);
  AppendLittleEndian(meta.crc, &payload);
  AppendLittleEndian(meta.bytes, &payload);
  std::string value;
  AppendFrameHeader(FrameChecksum::kMaskedLengthAndPayload, AsBytes(payload), &value);
  return value + payload;
}

absl::StatusOr<EtcdSnapMeta> DecodeEtcdSnapMeta(absl::string_view key, absl::string_view value) {
  absl::Span<const uint8_t> payload;
  const absl::Status frame = ReadFrame(FrameChecksum::kMaskedLengthAndPayload, AsBytes(value),
                                       kEtcdMetaPayloadBytes, &payload);
  if (!frame.ok()) return EtcdKeyDamaged(key, frame.message());
  EtcdSnapMeta meta;
  ByteReader reader(payload);
  if (payload.size() != kEtcdMetaPayloadBytes ||
      value.size() != kFrameHeaderBytes + payload.size() || !reader.Read(&meta.generation) ||
      !reader.Read(&meta.through) || !reader.Read(&meta.chunks) || !reader.Read(&meta.crc) ||
      !reader.Read(&meta.bytes)) {
    return EtcdKeyDamaged(key, "snapshot meta of the wrong size");
  }
  return meta;
}

std::vector<std::string> EncodeEtcdChunks(absl::string_view bytes, EtcdSnapMeta* meta) {
  std::vector<std::string> chunks;
  for (size_t pos = 0; pos < bytes.size(); pos += kEtcdSnapshotChunkBytes) {
    const absl::string_view piece = bytes.substr(pos, kEtcdSnapshotChunkBytes);
    std::string& chunk = chunks.emplace_back();
    AppendFrameHeader(FrameChecksum::kPayload, AsBytes(piece), &chunk);
    chunk.append(piece.data(), piece.size());
  }
  meta->chunks = static_cast<uint32_t>(chunks.size());
  meta->crc = FrameChecksumOf(FrameChecksum::kPayload, AsBytes(bytes));
  meta->bytes = bytes.size();
  return chunks;
}

absl::StatusOr<std::string> DecodeEtcdChunks(
    absl::string_view meta_key, const EtcdSnapMeta& meta,
    const std::vector<std::pair<std::string, std::string>>& chunks) {
  std::string bytes;
  for (const auto& [key, value] : chunks) {
    absl::Span<const uint8_t> payload;
    const absl::Status frame =
        ReadFrame(FrameChecksum::kPayload, AsBytes(value), kEtcdSnapshotChunkBytes, &payload);
    if (!frame.ok()) return EtcdKeyDamaged(key, absl::StrCat("chunk: ", frame.message()));
    if (value.size() != kFrameHeaderBytes + payload.size()) {
      return EtcdKeyDamaged(key, "chunk: bytes after its frame");
    }
    bytes.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  }
  if (bytes.size() != meta.bytes ||
      FrameChecksumOf(FrameChecksum::kPayload, AsBytes(bytes)) != meta.crc) {
    return EtcdKeyDamaged(
        meta_key, absl::StrCat("its ", chunks.size(), " chunks hold ", bytes.size(),
                               " bytes that do not match its size (", meta.bytes, ") or checksum"));
  }
  return bytes;
}

std::vector<std::string> EncodeEtcdSnapshot(const StateUpdate& restore, EtcdSnapMeta* meta) {
  return EncodeEtcdChunks(FileJournal::Frame(restore), meta);
}

absl::StatusOr<StateUpdate> DecodeEtcdSnapshot(
    absl::string_view meta_key, const EtcdSnapMeta& meta,
    const std::vector<std::pair<std::string, std::string>>& chunks) {
  ASSIGN_OR_RETURN(const std::string bytes, DecodeEtcdChunks(meta_key, meta, chunks));
  std::vector<StateUpdate> restore;
  RETURN_IF_ERROR(DecodeEtcdLogValue(meta_key, bytes, &restore));
  if (restore.size() != 1 || !restore.front().has_restore()) {
    return EtcdKeyDamaged(meta_key, "the snapshot is not one restore update");
  }
  return std::move(restore.front());
}

void AppendEtcdLogRecord(const StateUpdate& update, std::string* value) {
  *value += FileJournal::Frame(update);
}

absl::Status DecodeEtcdLogValue(absl::string_view key, absl::string_view value,
                                std::vector<StateUpdate>* out) {
  size_t pos = 0;
  for (int record = 0; pos < value.size(); ++record) {
    absl::Span<const uint8_t> payload;
    const absl::Status frame =
        ReadFrame(FrameChecksum::kMaskedLengthAndPayload, AsBytes(value).subspan(pos),
                  FileJournal::kMaxRecordBytes, &payload);
    if (!frame.ok()) {
      return EtcdKeyDamaged(key, absl::StrCat("record ", record, " (", frame.message(), ")"));
    }
    if (!out->emplace_back().ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      out->pop_back();
      return EtcdKeyDamaged(key, absl::StrCat("record ", record, " (payload does not parse)"));
    }
    pos += kFrameHeaderBytes + payload.size();
  }
  return absl::OkStatus();
}

}  // namespace stoker
