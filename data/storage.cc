#include "data/storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// Immutable after construction; pread is thread-safe.
class LocalFile : public RandomAccessFile {
 public:
  LocalFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~LocalFile() override { ::close(fd_); }

  const std::string& name() const override { return path_; }
  uint64_t size() const override { return size_; }

  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    RETURN_IF_ERROR(CheckReadRange(path_, size_, offset, n));
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return ErrnoStatus(errno, "read", path_);
      if (got == 0) {
        return absl::OutOfRangeError(absl::StrCat(path_, " shrank below offset ", offset));
      }
      out += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
    return absl::OkStatus();
  }

 private:
  const std::string path_;
  const int fd_;
  const uint64_t size_;
};

}  // namespace

absl::Status CheckReadRange(const std::string& name, uint64_t size, uint64_t offset, size_t n) {
  if (offset <= size && n <= size - offset) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat("read of ", n, " bytes at offset ", offset,
                                            " is past the end of ", name, " (", size, " bytes)"));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenLocalFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, "stat", path);
  }
  return std::unique_ptr<RandomAccessFile>(
      new LocalFile(path, fd, static_cast<uint64_t>(info.st_size)));
}

absl::StatusOr<StorageScheme> SchemeOf(const std::string& location) {
  const size_t sep = location.find("://");
  if (sep == std::string::npos) return StorageScheme::kLocal;
  const std::string scheme = absl::AsciiStrToLower(location.substr(0, sep));
  if (scheme == "http" || scheme == "https") return StorageScheme::kHttp;
  if (scheme == "s3") return StorageScheme::kS3;
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported URL scheme \"", location.substr(0, sep), "\" in ", location,
                   " (Stoker reads local paths, http://, https:// and s3://)"));
}

bool IsUrl(const std::string& location) { return location.find("://") != std::string::npos; }

absl::Status WriteLocalFile(const std::string& path, absl::Span<const uint8_t> data) {
  return ReplaceFile(path,
                     absl::string_view(reinterpret_cast<const char*>(data.data()), data.size()),
                     Durability::kSynced);
}

absl::StatusOr<std::vector<StorageEntry>> ListLocalFolder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return absl::NotFoundError(absl::StrCat("no folder ", dir));
  }
  std::vector<StorageEntry> entries;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error)) {
      entries.push_back(StorageEntry{it->path().string(), it->file_size(error)});
    }
  }
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", error.message()));
  }
  std::sort(entries.begin(), entries.end(),
            [](const StorageEntry& a, const StorageEntry& b) { return a.location < b.location; });
  return entries;
}

}  // namespace stoker
