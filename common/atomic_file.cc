#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// fsync on a fresh descriptor: Linux writes back the file's dirty pages whichever descriptor
// wrote them. `flags` adds O_DIRECTORY for a folder.
absl::Status SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  const absl::Status status =
      ::fsync(fd) == 0 ? absl::OkStatus() : ErrnoStatus(errno, "fsync", path);
  ::close(fd);
  return status;
}

std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash + 1);
}

// The rename and, for kDurable, the folder's sync; the content is synced by the caller.
absl::Status RenameOver(const std::string& temp, const std::string& path, Durability durability) {
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const absl::Status status = ErrnoStatus(errno, "rename onto", path);
    ::unlink(temp.c_str());
    return status;
  }
  if (durability != Durability::kDurable) return absl::OkStatus();
  return SyncPath(FolderOf(path), O_DIRECTORY);
}

}  // namespace

absl::Status ErrnoStatus(int error, absl::string_view what, absl::string_view path) {
  const std::string message = absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(error));
  if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM || error == EROFS) {
    return absl::PermissionDeniedError(message);
  }
  if (error == ENOSPC || error == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::UnavailableError(message);
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status ReplaceFile(const std::string& path, absl::string_view data, Durability durability) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "create", temp);
  absl::Status status = WriteAll(fd, data, temp);
  if (status.ok() && durability != Durability::kAtomic && ::fsync(fd) != 0) {
    status = ErrnoStatus(errno, "fsync", temp);
  }
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus(errno, "close", temp);
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  return RenameOver(temp, path, durability);
}

absl::Status CommitReplacement(const std::string& temp, const std::string& path,
                               Durability durability) {
  if (durability != Durability::kAtomic) {
    if (absl::Status synced = SyncPath(temp, 0); !synced.ok()) {
      ::unlink(temp.c_str());
      return synced;
    }
  }
  return RenameOver(temp, path, durability);
}

}  // namespace stoker
