#ifndef STOKER_DATA_MANIFEST_H_
#define STOKER_DATA_MANIFEST_H_

// Dataset manifests (proto/stoker/v1/manifest.proto) as JSON files, and the shard lists of a
// ShardDataset. Shard paths in a manifest are relative to the manifest's directory, which may be
// a URL prefix. Files are read and written through the Storage the caller hands in
// (data/storage_backend.h), which checks its data roots.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stoker/v1/manifest.pb.h"

namespace stoker {

class Storage;  // data/storage_backend.h

// Reads and parses a manifest from a path or URL. Errors: those of the storage (NOT_FOUND, ...);
// INVALID_ARGUMENT naming the location when the JSON does not parse or a shard path is empty,
// absolute or contains "..".
absl::StatusOr<stoker::v1::ShardManifest> ReadManifest(const Storage& storage,
                                                       const std::string& location);

// The manifest in `text` (the JSON of a file at `location`, which messages name). Errors:
// INVALID_ARGUMENT as ReadManifest's, never quoting the text.
absl::StatusOr<stoker::v1::ShardManifest> ParseManifest(const std::string& text,
                                                        const std::string& location);

// Writes `manifest` as JSON to `path` (a local path or s3:// URL) atomically (Storage::Write),
// so a reader sees the old manifest or the new one, never a part. UNAVAILABLE on an I/O error.
absl::Status WriteManifest(const Storage& storage, const stoker::v1::ShardManifest& manifest,
                           const std::string& path);

// `relative` resolved against the directory of `manifest_location` (a path or a URL).
std::string ResolveShardLocation(const std::string& manifest_location, const std::string& relative);

// Expands local globs (sorted) and s3:// globs (a listing of the prefix, every page; sorted by
// key), and keeps HTTP URLs and plain paths as they are, in order. NOT_FOUND naming the pattern
// when a glob matches nothing; INVALID_ARGUMENT for a URL scheme Stoker does not know.
// Local globs are refused (the storage's data-root error) unless their folder lies under a root.
absl::StatusOr<std::vector<std::string>> ExpandShardPaths(const Storage& storage,
                                                          const std::vector<std::string>& paths);

}  // namespace stoker

#endif  // STOKER_DATA_MANIFEST_H_
