#ifndef STOKER_COORDINATOR_JOURNAL_ENV_H_
#define STOKER_COORDINATOR_JOURNAL_ENV_H_

// The file operations FileJournal (journal.h) makes, behind an interface (LevelDB's Env and
// WritableFile idea), so that short writes, fsync failure and a full disk are unit-tested with a
// fake (coordinator/testing/fake_journal_env.h) instead of a real failing disk.
//
// Errors name the path and what failed ("journal /x: fdatasync: Input/output error"):
// RESOURCE_EXHAUSTED when the disk is full (ENOSPC, EDQUOT), INTERNAL for any other failure.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker {

// A file open for appending. Thread-compatible: FileJournal serializes its use.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all of `data` (retrying partial writes); on error some prefix may be in the file.
  virtual absl::Status Append(absl::string_view data) = 0;
  // Makes everything appended durable (fdatasync).
  virtual absl::Status Sync() = 0;
};

// Thread-safe.
class JournalEnv {
 public:
  virtual ~JournalEnv() = default;
  // The whole file; *exists = false (and "") when there is none.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path, bool* exists) = 0;
  // Opens an existing file for appending, synced through what it holds now.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path) = 0;
  // Cuts the file to `size` bytes.
  virtual absl::Status Truncate(const std::string& path, size_t size) = 0;
  // Atomically replaces the file's content with `data` (temporary file, fsync, rename, fsync of
  // the directory): a crash leaves either the old content or the new.
  virtual absl::Status ReplaceFile(const std::string& path, absl::string_view data) = 0;
};

// The real file system (POSIX). Never destroyed.
JournalEnv* PosixJournalEnv();

}  // namespace stoker

#endif  // STOKER_COORDINATOR_JOURNAL_ENV_H_
