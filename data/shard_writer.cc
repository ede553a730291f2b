#include "data/shard_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "data/shard_format.h"

namespace stoker {

using namespace shard_format;  // NOLINT: the format's constants and byte helpers.

absl::StatusOr<std::unique_ptr<ShardWriter>> ShardWriter::Create(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<ShardWriter> writer(new ShardWriter(path, file));
  uint8_t header[kFileHeaderSize] = {};
  std::memcpy(header, kFileMagic, 8);
  Put32(header + 8, kVersion);
  RETURN_IF_ERROR(writer->Write(header, sizeof(header)));
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
  body_.resize(kRecordHeaderSize + body_size);
  uint8_t* body = body_.data() + kRecordHeaderSize;
  body[0] = static_cast<uint8_t>(key.size());
  body[1] = static_cast<uint8_t>(key.size() >> 8);
  Put32(body + 2, static_cast<uint32_t>(metadata.size()));
  Put64(body + 6, static_cast<uint64_t>(label));
  uint8_t* p = body + kBodyPrefixSize;
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  if (!metadata.empty()) std::memcpy(p, metadata.data(), metadata.size());
  p += metadata.size();
  if (!data.empty()) std::memcpy(p, data.data(), data.size());
  Put32(body_.data(), kRecordMagic);
  Put32(body_.data() + 4, static_cast<uint32_t>(body_size));
  Put32(body_.data() + 8, Crc32c(body, body_size));
  index_.push_back(Entry{offset_, static_cast<uint32_t>(body_.size())});
  return Write(body_.data(), body_.size());
}

absl::Status ShardWriter::Finish() {
  if (file_ == nullptr) return absl::FailedPreconditionError(path_ + ": already finished");
  const uint64_t index_offset = offset_;
  std::vector<uint8_t> index(4 + index_.size() * kIndexEntrySize);
  Put32(index.data(), kIndexMagic);
  for (size_t i = 0; i < index_.size(); ++i) {
    Put64(index.data() + 4 + i * kIndexEntrySize, index_[i].offset);
    Put32(index.data() + 12 + i * kIndexEntrySize, index_[i].length);
  }
  RETURN_IF_ERROR(Write(index.data(), index.size()));
  uint8_t trailer[kTrailerSize];
  Put64(trailer, index_offset);
  Put64(trailer + 8, index_.size());
  Put32(trailer + 16, Crc32c(index.data(), index.size()));
  Put32(trailer + 20, kVersion);
  std::memcpy(trailer + 24, kTrailerMagic, 8);
  RETURN_IF_ERROR(Write(trailer, sizeof(trailer)));
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    return absl::UnavailableError(absl::StrCat("cannot flush ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace stoker
