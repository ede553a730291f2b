#include "common/text_file.h"

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

}  // namespace stoker
