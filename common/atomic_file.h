#ifndef STOKER_COMMON_ATOMIC_FILE_H_
#define STOKER_COMMON_ATOMIC_FILE_H_

// The one way Stoker replaces a local file: the new bytes go to a temporary file in the same
// folder, which is renamed over the target, so a reader sees the whole old file or the whole
// new one, never a mix. How far the new file must have reached the disk before the call returns
// is said by the caller, never implied:
//
//   kAtomic    rename only. A crash may bring back the old file, or leave the new name on
//              an empty file: for files a restart rewrites (port files, generated inputs,
//              command output a user re-runs for).
//   kSynced    the content is fsynced before the rename: after a crash the file is the whole
//              old one or the whole new one, but the rename itself may be lost: for files that
//              can be fetched or rebuilt again (cached shards, packed shards).
//   kDurable   also fsyncs the folder after the rename: once the call returns the new file
//              survives a power loss: for state that must not go back in time (the journal's
//              snapshot, a resume token a trainer restarts from).
//
// Errors carry the path and errno's text: NOT_FOUND (no such folder), PERMISSION_DENIED,
// RESOURCE_EXHAUSTED (disk or quota full), UNAVAILABLE (any other I/O error). On any error the
// temporary file is removed and the target is left as it was.
//
// Thread-compatible free functions; two writers of the same path race (the last rename wins).

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace stoker {

enum class Durability { kAtomic, kSynced, kDurable };

// Replaces `path` with `data` through "<path>.tmp".
absl::Status ReplaceFile(const std::string& path, absl::string_view data, Durability durability);

// Renames the finished file `temp` (closed, in `path`'s file system) over `path`, syncing as
// `durability` asks: for writers that stream a file too large to hold (a shard, a cache entry).
absl::Status CommitReplacement(const std::string& temp, const std::string& path,
                               Durability durability);

// Writes all of `data` to the open descriptor `fd` (of `path`, for messages), retrying short
// writes and EINTR. Errors by ErrnoStatus.
absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path);

// The status for `error` (an errno) while doing `what` to `path`, by the codes above.
absl::Status ErrnoStatus(int error, absl::string_view what, absl::string_view path);

}  // namespace stoker

#endif  // STOKER_COMMON_ATOMIC_FILE_H_
