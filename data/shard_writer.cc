#include "data/shard_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/byte_codec.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "data/shard_format.h"

namespace stoker {

using namespace shard_format;  // NOLINT: the format's constants.

absl::StatusOr<std::unique_ptr<ShardWriter>> ShardWriter::Create(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<ShardWriter> writer(new ShardWriter(path, file));
  std::string header(kFileMagic, sizeof(kFileMagic));
  AppendLittleEndian(kVersion, &header);
  AppendLittleEndian(uint32_t{0}, &header);  // flags
  RETURN_IF_ERROR(writer->Write(header.data(), header.size()));
  return writer;
}

ShardWriter::ShardWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

ShardWriter::~ShardWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status ShardWriter::Write(const void* data, size_t n) {
  if (std::fwrite(data, 1, n, file_) != n) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
  }
  offset_ += n;
  return absl::OkStatus();
}

absl::Status ShardWriter::Add(absl::string_view key, int64_t label, absl::Span<const uint8_t> data,
                              absl::string_view metadata) {
  if (file_ == nullptr) return absl::FailedPreconditionError(path_ + ": already finished");
  if (key.size() > 0xFFFF) {
    return absl::InvalidArgumentError(absl::StrCat("key of ", key.size(), " bytes is too long"));
  }
  const uint64_t body_size = kBodyPrefixSize + key.size() + metadata.size() + data.size();
  if (body_size > kMaxRecordBody) {
    return absl::InvalidArgumentError(absl::StrCat("record ", key, " is over 1 GiB"));
  }
  body_.clear();  // Keeps its capacity: no allocation per record once warm.
  body_.reserve(body_size);
  AppendLittleEndian(static_cast<uint16_t>(key.size()), &body_);
  AppendLittleEndian(static_cast<uint32_t>(metadata.size()), &body_);
  AppendLittleEndian(static_cast<uint64_t>(label), &body_);
  body_.insert(body_.end(), key.begin(), key.end());
  body_.insert(body_.end(), metadata.begin(), metadata.end());
  body_.insert(body_.end(), data.begin(), data.end());
  std::string header;  // kRecordHeaderSize bytes: no allocation.
  AppendLittleEndian(kRecordMagic, &header);
  AppendFrameHeader(FrameChecksum::kPayload, body_, &header);
  index_.push_back(Entry{offset_, static_cast<uint32_t>(header.size() + body_.size())});
  RETURN_IF_ERROR(Write(header.data(), header.size()));
  return Write(body_.data(), body_.size());
}

absl::Status ShardWriter::Finish() {
  if (file_ == nullptr) return absl::FailedPreconditionError(path_ + ": already finished");
  const uint64_t index_offset = offset_;
  std::string index;
  index.reserve(4 + index_.size() * kIndexEntrySize);
  AppendLittleEndian(kIndexMagic, &index);
  for (const Entry& entry : index_) {
    AppendLittleEndian(entry.offset, &index);
    AppendLittleEndian(entry.length, &index);
  }
  RETURN_IF_ERROR(Write(index.data(), index.size()));
  std::string trailer;
  AppendLittleEndian(index_offset, &trailer);
  AppendLittleEndian(static_cast<uint64_t>(index_.size()), &trailer);
  AppendLittleEndian(Crc32c(index.data(), index.size()), &trailer);
  AppendLittleEndian(kVersion, &trailer);
  trailer.append(kTrailerMagic, sizeof(kTrailerMagic));
  RETURN_IF_ERROR(Write(trailer.data(), trailer.size()));
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    return absl::UnavailableError(absl::StrCat("cannot flush ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace stoker
