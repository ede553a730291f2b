#include "coordinator/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/crc32c.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;

// LevelDB's mask: a CRC stored next to the data it covers is rotated and offset, so that a
// record holding its own CRC does not checksum to something trivial.
uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

// CRC-32C of a record's 4 length bytes followed by its payload.
uint32_t RecordCrc(const char* length_bytes, absl::string_view payload) {
  return Crc32cExtend(Crc32c(length_bytes, 4), payload.data(), payload.size());
}

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat("journal ", path, ": ", what, ": ", strerror(errno)));
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path, bool* exists) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  *exists = fd >= 0;
  if (fd < 0) {
    if (errno == ENOENT) return std::string();
    return Errno("open", path);
  }
  std::string data;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return Errno("read", path);
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

absl::Status SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : Errno("fsync directory", dir);
}

absl::Status Corrupt(const std::string& path, size_t offset, absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat("journal ", path, ": corrupt record at offset ", offset, " (", why, ")"));
}

// Writes `data` as the whole content of `path` via a temporary file and a rename.
absl::Status ReplaceFile(const std::string& path, absl::string_view data) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", tmp);
  absl::Status status = WriteAll(fd, data, tmp);
  if (status.ok() && ::fsync(fd) != 0) status = Errno("fsync", tmp);
  ::close(fd);
  RETURN_IF_ERROR(status);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Errno("rename onto", path);
  return SyncDirectoryOf(path);
}

// OK for a (maybe torn) magic of a version this coordinator reads.
absl::Status CheckMagic(const std::string& path, absl::string_view data) {
  constexpr size_t kPrefix = FileJournal::kMagicBytes - 1;  // "STKJRNL", then the version
  const absl::string_view magic(FileJournal::kMagic, kPrefix);
  if (data.substr(0, kPrefix) != magic.substr(0, std::min(data.size(), kPrefix))) {
    return Corrupt(path, 0, "not a stoker journal: bad magic");
  }
  if (data.size() <= kPrefix) return absl::OkStatus();
  const char version = data[kPrefix];
  if (version < FileJournal::kOldestVersion || version > FileJournal::kVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "journal ", path, ": format version '", absl::string_view(&version, 1),
        "' is not one this coordinator reads (", absl::string_view(&FileJournal::kOldestVersion, 1),
        " to ", absl::string_view(&FileJournal::kVersion, 1),
        "); run the coordinator that wrote it, or start on a new journal"));
  }
  return absl::OkStatus();
}

}  // namespace

FileJournal::FileJournal(std::string path) : path_(std::move(path)) {}

FileJournal::~FileJournal() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
}

std::string FileJournal::Frame(const StateUpdate& update) {
  std::string payload;
  update.SerializeToString(&payload);
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  PutU32(&out, static_cast<uint32_t>(payload.size()));
  const uint32_t crc = RecordCrc(out.data(), payload);
  PutU32(&out, MaskCrc(crc));
  out += payload;
  return out;
}

absl::StatusOr<std::vector<StateUpdate>> FileJournal::Load() {
  bool exists = false;
  absl::StatusOr<std::string> read = ReadFile(path_, &exists);
  if (!read.ok()) return read.status();
  const std::string data = *std::move(read);
  const std::string magic(kMagic, kMagicBytes);
  RETURN_IF_ERROR(CheckMagic(path_, data));
  std::vector<StateUpdate> updates;
  size_t pos = kMagicBytes;
  while (pos < data.size()) {
    if (data.size() - pos < kHeaderBytes) break;  // torn header
    const uint32_t length = GetU32(&data[pos]);
    if (length > kMaxRecordBytes) {
      return Corrupt(path_, pos, absl::StrCat("length ", length, " above the limit"));
    }
    if (data.size() - pos - kHeaderBytes < length) break;  // torn payload
    const absl::string_view payload(&data[pos + kHeaderBytes], length);
    const uint32_t crc = RecordCrc(&data[pos], payload);
    if (MaskCrc(crc) != GetU32(&data[pos + 4])) return Corrupt(path_, pos, "crc mismatch");
    StateUpdate& update = updates.emplace_back();
    if (!update.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      return Corrupt(path_, pos, "payload does not parse");
    }
    pos += kHeaderBytes + length;
  }
  if (pos < kMagicBytes || data.size() < kMagicBytes) {
    // New (or torn while being created): write the magic.
    RETURN_IF_ERROR(ReplaceFile(path_, magic));
    pos = kMagicBytes;
  } else if (pos < data.size()) {
    STOKER_LOG(WARNING) << "journal " << path_ << ": torn record at offset " << pos << " ("
                        << data.size() - pos << " bytes dropped); recovered "
                        << updates.size() << " whole records";
    if (::truncate(path_.c_str(), static_cast<off_t>(pos)) != 0) {
      return Errno("truncate", path_);
    }
  }
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) return Errno("open for append", path_);
  if (::fsync(fd_) != 0) return Errno("fsync", path_);
  bytes_ = pos;
  return updates;
}

uint64_t FileJournal::Add(const StateUpdate& update) {
  std::string framed = Frame(update);
  absl::MutexLock lock(&mu_);
  pending_ += framed;
  bytes_ += framed.size();
  return ++added_;
}

uint64_t FileJournal::last_added() const {
  absl::MutexLock lock(&mu_);
  return added_;
}

uint64_t FileJournal::bytes_since_compact() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

StateStore::Stats FileJournal::stats() const {
  absl::MutexLock lock(&mu_);
  Stats stats = stats_;
  stats.bytes_stored = bytes_;
  return stats;
}

bool FileJournal::SyncDoneOrFree(SyncWait* wait) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  FileJournal* self = wait->self;
  return !self->failed_.ok() || self->durable_ >= wait->seq || !self->syncing_;
}

absl::Status FileJournal::Sync(uint64_t seq) {
  SyncWait wait{this, seq};
  mu_.Lock();
  mu_.Await(absl::Condition(&SyncDoneOrFree, &wait));
  if (!failed_.ok() || durable_ >= seq) {
    absl::Status status = failed_;
    mu_.Unlock();
    return status;
  }
  // Leader: write everything queued so far, for every waiter.
  syncing_ = true;
  std::string batch;
  batch.swap(pending_);
  const uint64_t through = added_;
  const int fd = fd_;
  mu_.Unlock();
  const absl::Time start = absl::Now();
  absl::Status status = WriteAll(fd, batch, path_);
  if (status.ok() && ::fdatasync(fd) != 0) status = Errno("fdatasync", path_);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  mu_.Lock();
  syncing_ = false;
  if (status.ok()) {
    stats_.bytes_written_total += batch.size();
    stats_.sync_seconds.Observe(seconds);
    durable_ = std::max(durable_, through);
  } else {
    STOKER_LOG(ERROR) << status;
    failed_ = status;
  }
  mu_.Unlock();
  return status;
}

absl::Status FileJournal::Compact(const StateUpdate& snapshot) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* syncing) { return !*syncing; }, &syncing_));
  RETURN_IF_ERROR(failed_);
  std::string data(kMagic, kMagicBytes);
  data += Frame(snapshot);
  absl::Status status = ReplaceFile(path_, data);
  int fd = -1;
  if (status.ok()) {
    fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) status = Errno("open for append", path_);
  }
  if (!status.ok()) {
    failed_ = status;
    return status;
  }
  ::close(fd_);
  fd_ = fd;
  pending_.clear();
  durable_ = added_;
  bytes_ = data.size();
  return absl::OkStatus();
}

}  // namespace stoker
