#include "data/manifest.h"

#include <fnmatch.h>
#include <glob.h>

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "data/manifest_json.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "google/protobuf/util/json_util.h"

namespace stoker {

absl::StatusOr<stoker::v1::ShardManifest> ReadManifest(const Storage& storage,
                                                       const std::string& location) {
  ASSIGN_OR_RETURN(std::string text, storage.ReadAll(location));
  return ParseManifest(text, location);
}

absl::StatusOr<stoker::v1::ShardManifest> ParseManifest(const std::string& text,
                                                        const std::string& location) {
  stoker::v1::ShardManifest manifest;
  if (std::optional<stoker::v1::ShardManifest> fast = ParseManifestFast(text)) {
    manifest = *std::move(fast);
  } else if (!google::protobuf::util::JsonStringToMessage(text, &manifest).ok()) {
    // The parser's message may quote the text: never echo a file's contents (it may be any
    // readable file, docs/security.md).
    return absl::InvalidArgumentError(absl::StrCat(
        "manifest ", location, " is not a JSON ShardManifest (", text.size(), " bytes)"));
  }
  for (int i = 0; i < manifest.shards_size(); ++i) {
    const std::string& path = manifest.shards(i).path();
    if (path.empty() || path[0] == '/' || absl::StrContains(path, "..") || IsUrl(path)) {
      return absl::InvalidArgumentError(absl::StrCat("manifest ", location, ": shards[", i,
                                                     "].path must be a relative path, got \"", path,
                                                     "\""));
    }
  }
  return manifest;
}

absl::Status WriteManifest(const Storage& storage, const stoker::v1::ShardManifest& manifest,
                           const std::string& path) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  const auto printed = google::protobuf::util::MessageToJsonString(manifest, &json, options);
  if (!printed.ok()) return absl::InternalError(printed.ToString());
  return storage.Write(
      path, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
}

std::string ResolveShardLocation(const std::string& manifest_location,
                                 const std::string& relative) {
  const size_t slash = manifest_location.rfind('/');
  if (slash == std::string::npos) return relative;
  return absl::StrCat(manifest_location.substr(0, slash + 1), relative);
}

namespace {

// The objects matching an s3:// glob: a listing of the prefix before the first wildcard,
// filtered with fnmatch ('*' and '?' do not cross '/').
absl::Status ExpandS3Glob(const Storage& storage, const std::string& pattern,
                          std::vector<std::string>* out) {
  const std::string prefix = pattern.substr(0, pattern.find_first_of("*?["));
  ASSIGN_OR_RETURN(std::vector<StorageEntry> entries, storage.List(prefix));
  const size_t before = out->size();
  for (const StorageEntry& entry : entries) {
    if (::fnmatch(pattern.c_str(), entry.location.c_str(), FNM_PATHNAME) == 0) {
      out->push_back(entry.location);
    }
  }
  if (out->size() == before) return absl::NotFoundError(absl::StrCat("no shard matches ", pattern));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandShardPaths(const Storage& storage,
                                                          const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(StorageScheme scheme, SchemeOf(path));
    if (scheme == StorageScheme::kHttp || path.find_first_of("*?[") == std::string::npos) {
      out.push_back(path);
      continue;
    }
    if (scheme == StorageScheme::kS3) {
      RETURN_IF_ERROR(ExpandS3Glob(storage, path, &out));
      continue;
    }
    // The glob's folder must lie under a data root before anything is listed.
    RETURN_IF_ERROR(storage.CheckLocation(path.substr(0, path.find_first_of("*?["))));
    glob_t matches;
    const int rc = ::glob(path.c_str(), 0, nullptr, &matches);  // Sorted by glob(3).
    if (rc == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
    }
    ::globfree(&matches);
    if (rc != 0) return absl::NotFoundError(absl::StrCat("no shard matches ", path));
  }
  return out;
}

}  // namespace stoker
