#include "common/text_file.h"

#include <sys/stat.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace stoker {

absl::Status WriteTextFile(absl::string_view flag, const std::string& path,
                           absl::string_view text) {
  // Command output a user re-runs for: atomic, without waiting for the disk.
  const absl::Status status = ReplaceFile(path, text, Durability::kAtomic);
  if (status.ok()) return status;
  return absl::UnavailableError(
      absl::StrCat(flag, ": cannot write ", path, " (", status.message(), ")"));
}

absl::StatusOr<std::string> ReadTextFile(absl::string_view flag, const std::string& path,
                                         size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  std::string text;
  text.resize(max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is over ", max_bytes, " bytes"));
  }
  return text;
}

std::string FileVersion(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "";
  return absl::StrCat(st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, " ", st.st_size, " ", st.st_ino);
}

}  // namespace stoker
