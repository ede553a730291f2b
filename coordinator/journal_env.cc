#include "coordinator/journal_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  const int error = errno;
  const std::string message = absl::StrCat("journal ", path, ": ", what, ": ", strerror(error));
  if (error == ENOSPC || error == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
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

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override { ::close(fd_); }

  absl::Status Append(absl::string_view data) override { return WriteAll(fd_, data, path_); }
  absl::Status Sync() override {
    return ::fdatasync(fd_) == 0 ? absl::OkStatus() : Errno("fdatasync", path_);
  }

 private:
  const std::string path_;
  const int fd_;
};

class PosixEnv : public JournalEnv {
 public:
  absl::StatusOr<std::string> ReadFile(const std::string& path, bool* exists) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    *exists = fd >= 0;
    if (fd < 0) return errno == ENOENT ? absl::StatusOr<std::string>("") : Errno("open", path);
    std::string data;
    char buf[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const absl::Status status = Errno("read", path);
        ::close(fd);
        return status;
      }
      if (n == 0) break;
      data.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return data;
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return Errno("open for append", path);
    auto file = std::make_unique<PosixWritableFile>(path, fd);
    RETURN_IF_ERROR(file->Sync());
    return file;
  }

  absl::Status Truncate(const std::string& path, size_t size) override {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) return Errno("truncate", path);
    return absl::OkStatus();
  }

  absl::Status ReplaceFile(const std::string& path, absl::string_view data) override {
    // This interface's codes (journal_env.h): RESOURCE_EXHAUSTED for a full disk, else INTERNAL.
    const absl::Status status = ::stoker::ReplaceFile(path, data, Durability::kDurable);
    if (status.ok() || absl::IsResourceExhausted(status)) return PrefixStatus("journal ", status);
    return absl::InternalError(absl::StrCat("journal ", status.message()));
  }
};

}  // namespace

JournalEnv* PosixJournalEnv() {
  static JournalEnv* const env = new PosixEnv();
  return env;
}

}  // namespace stoker
