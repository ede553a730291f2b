#include "data/data_roots.h"

#include <climits>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "data/storage.h"

namespace stoker {
namespace {

bool HasDotDotSegment(const std::string& location) {
  for (absl::string_view segment : absl::StrSplit(location, '/')) {
    if (segment == "..") return true;
  }
  return false;
}

absl::Status CheckForm(const std::string& location, const char* what) {
  if (absl::StartsWithIgnoreCase(location, "file:")) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": file:// locations are not supported; give the path: ", location));
  }
  if (HasDotDotSegment(location)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"..\" is not allowed in a location: ", location));
  }
  return absl::OkStatus();
}

// The canonical absolute form of `path`: realpath of its longest existing ancestor (symlinks
// resolved) followed by the rest. Reads no file contents.
std::string Resolve(const std::string& path) {
  std::string existing = path;
  std::string rest;
  while (!existing.empty()) {
    char buffer[PATH_MAX];
    if (::realpath(existing.c_str(), buffer) != nullptr) {
      std::string resolved(buffer);
      if (!rest.empty()) resolved = absl::StrCat(resolved == "/" ? "" : resolved, rest);
      return resolved;
    }
    const size_t slash = existing.rfind('/');
    if (slash == std::string::npos) {
      rest = absl::StrCat("/", existing, rest);
      existing = ".";
      continue;
    }
    rest = absl::StrCat(existing.substr(slash), rest);
    existing = slash == 0 ? "/" : existing.substr(0, slash);
  }
  return path;
}

}  // namespace

absl::StatusOr<DataRoots> DataRoots::Create(const std::vector<std::string>& roots) {
  DataRoots result;
  for (const std::string& root : roots) {
    if (root.empty()) return absl::InvalidArgumentError("data_roots: an empty root");
    if (absl::Status status = CheckForm(root, "data_roots"); !status.ok()) return status;
    absl::StatusOr<StorageScheme> scheme = SchemeOf(root);
    if (!scheme.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("data_roots: ", scheme.status().message()));
    }
    if (*scheme != StorageScheme::kLocal) {
      result.urls_.push_back(root);
      continue;
    }
    if (root[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("data_roots: a local root must be an absolute path, got ", root));
    }
    char buffer[PATH_MAX];
    if (::realpath(root.c_str(), buffer) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("data_roots: no such folder: ", root));
    }
    std::string resolved(buffer);
    if (resolved == "/") result.anything_ = true;
    if (resolved.back() != '/') resolved += '/';
    result.local_.push_back(std::move(resolved));
  }
  return result;
}

absl::Status DataRoots::Check(const std::string& location) const {
  if (unrestricted()) return absl::OkStatus();
  if (absl::Status status = CheckForm(location, "data location"); !status.ok()) return status;
  absl::StatusOr<StorageScheme> scheme = SchemeOf(location);
  if (!scheme.ok()) return scheme.status();
  if (*scheme != StorageScheme::kLocal) {
    for (const std::string& prefix : urls_) {
      if (absl::StartsWith(location, prefix)) return absl::OkStatus();
    }
  } else {
    const std::string resolved = Resolve(location) + "/";  // A root itself is under it.
    for (const std::string& root : local_) {
      if (absl::StartsWith(resolved, root)) return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(
      absl::StrCat("data location ", location, " is under no --data-root"));
}

}  // namespace stoker
