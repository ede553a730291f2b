#include "data/shard_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/byte_codec.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "data/s3_client.h"

namespace stoker {
namespace {

constexpr uint32_t kFooterMagic = 0x434b5453;  // "STKC" little-endian.
constexpr size_t kFooterBytes = 16;
constexpr size_t kCopyChunk = size_t{8} << 20;
constexpr char kSuffix[] = ".shard";

// [crc32c of the content][magic][content size], little-endian.
std::string EncodeFooter(uint32_t crc, uint64_t size) {
  std::string footer;
  AppendLittleEndian(crc, &footer);
  AppendLittleEndian(kFooterMagic, &footer);
  AppendLittleEndian(size, &footer);
  return footer;
}

// The content's crc from a footer that is whole and describes `size` bytes; nullopt otherwise.
std::optional<uint32_t> DecodeFooter(absl::Span<const uint8_t> footer, uint64_t size) {
  ByteReader reader(footer);
  uint32_t crc = 0, magic = 0;
  uint64_t footer_size = 0;
  if (!reader.Read(&crc) || !reader.Read(&magic) || !reader.Read(&footer_size) ||
      magic != kFooterMagic || footer_size != size) {
    return std::nullopt;
  }
  return crc;
}

absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("shard cache: cannot ", what, " ", path, ": ", std::strerror(errno)));
}

// A cache entry seen through its content (the footer hidden). Immutable; thread-safe.
class CachedFile : public RandomAccessFile {
 public:
  CachedFile(std::unique_ptr<RandomAccessFile> local, std::string name, uint64_t size)
      : local_(std::move(local)), name_(std::move(name)), size_(size) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    RETURN_IF_ERROR(CheckReadRange(name_, size_, offset, n));
    return local_->ReadAt(offset, n, out);
  }

 private:
  const std::unique_ptr<RandomAccessFile> local_;
  const std::string name_;
  const uint64_t size_;
};

// Holds an exclusive flock on the file at `path` while alive. Each holder opens the file
// itself, so the lock excludes other threads of this process as well as other processes.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // Releases the lock.
  }

 private:
  int fd_ = -1;
};

// Marks `path` most recently used: its modification time set to now, with nanoseconds (the
// kernel's own "now" is only as fine as a timer tick), and strictly after the last mark this
// process made, so entries used in quick succession keep their order.
void Touch(const std::string& path) {
  static std::atomic<int64_t> last{0};
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t stamp = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  int64_t previous = last.load();
  do {
    stamp = std::max(stamp, previous + 1);
  } while (!last.compare_exchange_weak(previous, stamp));
  const struct timespec times[2] = {{stamp / 1'000'000'000, stamp % 1'000'000'000},
                                    {stamp / 1'000'000'000, stamp % 1'000'000'000}};
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

struct Entry {
  std::string path;
  uint64_t bytes;
  struct timespec used;
};

std::vector<Entry> ListEntries(const std::string& dir) {
  std::vector<Entry> entries;
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return entries;
  while (const dirent* item = ::readdir(listing)) {
    if (!absl::EndsWith(item->d_name, kSuffix)) continue;
    const std::string path = absl::StrCat(dir, "/", item->d_name);
    struct stat info;
    if (::stat(path.c_str(), &info) == 0) {
      entries.push_back(Entry{path, static_cast<uint64_t>(info.st_size), info.st_mtim});
    }
  }
  ::closedir(listing);
  return entries;
}

// Deletes copies left in <dir>/tmp by a process that died while filling (older than an hour,
// so a fill in progress elsewhere is left alone).
void RemoveStaleParts(const std::string& tmp) {
  DIR* listing = ::opendir(tmp.c_str());
  if (listing == nullptr) return;
  const time_t cutoff = ::time(nullptr) - 3600;
  while (const dirent* item = ::readdir(listing)) {
    const std::string path = absl::StrCat(tmp, "/", item->d_name);
    struct stat info;
    if (absl::EndsWith(item->d_name, ".part") && ::stat(path.c_str(), &info) == 0 &&
        info.st_mtime < cutoff) {
      ::unlink(path.c_str());
    }
  }
  ::closedir(listing);
}

}  // namespace

absl::Status ShardCacheOptions::Validate() const {
  if (dir.empty()) return absl::InvalidArgumentError("cache_dir: must not be empty");
  if (max_bytes == 0) return absl::InvalidArgumentError("cache_bytes: must be > 0");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ShardCache>> ShardCache::Open(const ShardCacheOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  for (const std::string& dir : {options.dir, options.dir + "/tmp"}) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return IoError("create", dir);
  }
  RemoveStaleParts(options.dir + "/tmp");
  return std::unique_ptr<ShardCache>(new ShardCache(options));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> ShardCache::Get(
    std::unique_ptr<RandomAccessFile> source) {
  if (source->size() + kFooterBytes > options_.max_bytes) {
    ++uncacheable_;
    return source;
  }
  const std::string id = absl::StrCat(source->name(), "\n", source->size());
  const std::string key =
      Sha256Hex(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(id.data()), id.size()))
          .substr(0, 32);
  const std::string path = absl::StrCat(options_.dir, "/", key, kSuffix);
  // One fill per shard, whoever asks: other threads and processes wait, then hit.
  FileLock one_fill(absl::StrCat(options_.dir, "/tmp/", key, ".lock"));
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> entry,
                   OpenEntry(path, source->name(), source->size()));
  if (entry != nullptr) {
    ++hits_;
    return entry;
  }
  ++misses_;
  RETURN_IF_ERROR(Fill(*source, path));
  ASSIGN_OR_RETURN(entry, OpenEntry(path, source->name(), source->size()));
  if (entry == nullptr) return source;  // Evicted at once by another process: read the source.
  return entry;
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> ShardCache::OpenEntry(const std::string& path,
                                                                        const std::string& name,
                                                                        uint64_t size) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> local = OpenLocalFile(path);
  if (absl::IsNotFound(local.status())) return nullptr;
  RETURN_IF_ERROR(local.status());
  RandomAccessFile& file = **local;
  std::optional<uint32_t> footer_crc;
  if (file.size() == size + kFooterBytes) {
    uint8_t footer[kFooterBytes];
    RETURN_IF_ERROR(file.ReadAt(size, kFooterBytes, footer));
    footer_crc = DecodeFooter(footer, size);
  }
  bool intact = footer_crc.has_value();
  bool checked;
  {
    absl::MutexLock lock(&mu_);
    checked = verified_.count(path) > 0;
  }
  if (intact && !checked) {
    std::vector<uint8_t> chunk(std::min<uint64_t>(kCopyChunk, std::max<uint64_t>(size, 1)));
    uint32_t crc = 0;
    for (uint64_t offset = 0; offset < size; offset += chunk.size()) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - offset));
      RETURN_IF_ERROR(file.ReadAt(offset, n, chunk.data()));
      crc = Crc32cExtend(crc, chunk.data(), n);
    }
    intact = crc == *footer_crc;
  }
  if (!intact) {
    ++corrupt_;
    ::unlink(path.c_str());
    return nullptr;
  }
  {
    absl::MutexLock lock(&mu_);
    verified_.insert(path);
  }
  Touch(path);
  return std::unique_ptr<RandomAccessFile>(new CachedFile(*std::move(local), name, size));
}

absl::Status ShardCache::Fill(const RandomAccessFile& source, const std::string& path) {
  std::random_device random;
  const std::string temp = absl::StrCat(options_.dir, "/tmp/", ::getpid(), "-", random(), ".part");
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create", temp);
  std::vector<uint8_t> chunk(std::min<uint64_t>(kCopyChunk, std::max<uint64_t>(source.size(), 1)));
  uint32_t crc = 0;
  absl::Status status;
  auto write_all = [&](const uint8_t* data, size_t n) {
    if (!status.ok()) return;
    status =
        PrefixStatus("shard cache: ",
                     WriteAll(fd, absl::string_view(reinterpret_cast<const char*>(data), n), temp));
  };
  for (uint64_t offset = 0; offset < source.size() && status.ok(); offset += chunk.size()) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), source.size() - offset));
    status = source.ReadAt(offset, n, chunk.data());
    if (!status.ok()) break;
    crc = Crc32cExtend(crc, chunk.data(), n);
    write_all(chunk.data(), n);
  }
  const std::string footer = EncodeFooter(crc, source.size());
  write_all(reinterpret_cast<const uint8_t*>(footer.data()), footer.size());
  if (::close(fd) != 0 && status.ok()) status = IoError("close", temp);
  if (status.ok()) {
    FileLock lock(options_.dir + "/lock");
    MakeRoom(source.size() + kFooterBytes);
    // Synced: after a crash an entry is whole or absent (a lost one is fetched again).
    status = PrefixStatus("shard cache: ", CommitReplacement(temp, path, Durability::kSynced));
    if (status.ok()) Touch(path);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  {
    absl::MutexLock lock(&mu_);
    verified_.insert(path);  // Written and checksummed by this process.
  }
  bytes_filled_ += source.size();
  return absl::OkStatus();
}

void ShardCache::MakeRoom(uint64_t incoming) {
  std::vector<Entry> entries = ListEntries(options_.dir);
  uint64_t total = 0;
  for (const Entry& entry : entries) total += entry.bytes;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec) < std::tie(b.used.tv_sec, b.used.tv_nsec);
  });
  for (const Entry& entry : entries) {
    if (total + incoming <= options_.max_bytes) break;
    if (::unlink(entry.path.c_str()) == 0) {
      total -= entry.bytes;
      ++evictions_;
      absl::MutexLock lock(&mu_);
      verified_.erase(entry.path);
    }
  }
}

ShardCacheStats ShardCache::stats() const {
  return ShardCacheStats{hits_.load(),      misses_.load(),  uncacheable_.load(),
                         evictions_.load(), corrupt_.load(), bytes_filled_.load()};
}

uint64_t ShardCache::DiskBytes() const {
  uint64_t total = 0;
  for (const Entry& entry : ListEntries(options_.dir)) total += entry.bytes;
  return total;
}

}  // namespace stoker
