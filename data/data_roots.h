#ifndef STOKER_DATA_DATA_ROOTS_H_
#define STOKER_DATA_DATA_ROOTS_H_

// Where a process may read datasets from (docs/security.md, "Data roots"): local folders and URL
// prefixes given with --data-root. Storage (data/storage_backend.h) checks every location
// against them before it opens, lists or reads anything, so a job cannot point a worker or the
// coordinator at /etc/shadow, climb out with "..", follow a symlink out of a root, or glob
// outside one.
//
// Thread-compatible value type (immutable after Create: safe to share between threads).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace stoker {

class DataRoots {
 public:
  // No roots: every location is allowed (the binaries warn about it).
  DataRoots() = default;

  // `roots`: local folders (must exist; symlinks in them are resolved now) and URL prefixes
  // ("s3://bucket/datasets/", "https://host/data/"); the root "/" is the explicit "anything":
  // every path and URL. INVALID_ARGUMENT naming "data_roots" for a folder that does not exist, a
  // relative folder, "file://" or a scheme Stoker does not know.
  static absl::StatusOr<DataRoots> Create(const std::vector<std::string>& roots);

  bool unrestricted() const { return anything_ || (local_.empty() && urls_.empty()); }

  // OK when `location` lies under a root (or there are no roots). Never reads the file.
  // INVALID_ARGUMENT for a ".." path segment or a "file://" location; PERMISSION_DENIED when the
  // location (after resolving symlinks of its existing part) is under no root. Messages name the
  // location, never file contents.
  absl::Status Check(const std::string& location) const;

 private:
  std::vector<std::string> local_;  // Resolved absolute folders, each ending in '/'.
  std::vector<std::string> urls_;   // URL prefixes as given.
  bool anything_ = false;           // The root "/" was given.
};

}  // namespace stoker

#endif  // STOKER_DATA_DATA_ROOTS_H_
