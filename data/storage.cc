#include "data/storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "data/http_file.h"

namespace stoker {
namespace {

absl::Status ErrnoStatus(int error, const std::string& what, const std::string& path) {
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

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
      if (got < 0) return ErrnoStatus(errno, "cannot read", path_);
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
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, "cannot stat", path);
  }
  return std::unique_ptr<RandomAccessFile>(
      new LocalFile(path, fd, static_cast<uint64_t>(info.st_size)));
}

bool IsUrl(const std::string& location) {
  return absl::StartsWith(location, "http://") || absl::StartsWith(location, "https://");
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenStorage(const std::string& location) {
  if (IsUrl(location)) return OpenHttpFile(location, HttpOptions());
  return OpenLocalFile(location);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& location) {
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, OpenStorage(location));
  std::string text(file->size(), '\0');
  RETURN_IF_ERROR(file->ReadAt(0, text.size(), reinterpret_cast<uint8_t*>(text.data())));
  return text;
}

}  // namespace stoker
