#ifndef STOKER_COORDINATOR_JOURNAL_H_
#define STOKER_COORDINATOR_JOURNAL_H_

// FileJournal: the StateStore (state_store.h) kept in one local file.
//
// File format: the 8-byte magic "STKJRNL" + the format version digit, then records, each
//   [u32 length, little-endian][u32 masked crc32c, little-endian][length bytes: a StateUpdate]
// where the crc is LevelDB's mask of Crc32c(the 4 length bytes followed by the payload): it
// covers the length too, so a damaged length is caught by the crc unless it points past the end
// of file. That is common/byte_codec.h's frame with FrameChecksum::kMaskedLengthAndPayload.
//
// Versions: 2 (written) carries each job's geometry in create_job; 1 (read, for journals of
// earlier coordinators) does not, and Coordinator::Recover upgrades its records. Another
// version digit is FAILED_PRECONDITION naming it (a journal of a newer coordinator).
//
// Recovery (Load):
//   - a missing or empty file is a new journal;
//   - an incomplete record at the end (a header or payload cut short: the process or machine
//     died mid-append) is a torn tail: the file is truncated to the last whole record and the
//     loss is logged;
//   - anything else that is wrong — a bad magic, a whole record whose crc does not match, a
//     payload that does not parse, a length above kMaxRecordBytes — is DATA_LOSS
//     "journal <path>: corrupt record at offset N (...)" and the coordinator refuses to start.
//   Limitation: a corrupted length that points past the end of file reads as a torn tail.
//
// Durability: Add buffers a record; Sync writes the buffer and fdatasyncs it, one caller doing
// the write for every caller waiting (group commit). A failed write or fdatasync (an I/O
// error: INTERNAL; a full disk: RESOURCE_EXHAUSTED, both naming the file) latches: every later
// Sync and Compact fails with that error too, so the coordinator never replies as if a change
// were durable after the file may have lost it; it must be restarted (replay then recovers to
// the last whole record); records Added after a failure are dropped, not buffered. All file access
// goes through a JournalEnv (journal_env.h). Compact writes a one-record journal (the snapshot) to
// "<path>.tmp", fsyncs it, renames it over <path> and fsyncs the directory, so a crash leaves
// either the old journal or the new one; it holds no lock while it does (Adds go on), and Syncs
// wait for it.
//
// Thread-safe.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "coordinator/journal_env.h"
#include "coordinator/state_store.h"

namespace stoker {

class FileJournal : public StateStore {
 public:
  static constexpr char kMagic[] = "STKJRNL2";  // 8 bytes in the file, without the NUL
  static constexpr size_t kMagicBytes = 8;
  // The format version this coordinator writes, and the oldest it reads.
  static constexpr char kVersion = '2';
  static constexpr char kOldestVersion = '1';
  static constexpr size_t kHeaderBytes = 8;  // common/byte_codec.h's kFrameHeaderBytes
  static constexpr uint32_t kMaxRecordBytes = 64u << 20;

  // A journal at `path`, read and written through `env`; `clock` times each group commit
  // (Stats::sync_seconds). Both outlive it. Nothing is read or created until Load.
  explicit FileJournal(std::string path, JournalEnv* env = PosixJournalEnv(),
                       Clock* clock = Clock::Real());
  ~FileJournal() override;
  FileJournal(const FileJournal&) = delete;
  FileJournal& operator=(const FileJournal&) = delete;

  // See StateStore::Load and the recovery rules above. Also INTERNAL when the file cannot be
  // read, created or truncated (the message names it and errno), RESOURCE_EXHAUSTED when the
  // disk is full.
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> Load() override;
  uint64_t Add(const stoker::v1::StateUpdate& update) override;
  uint64_t last_added() const override;
  absl::Status Sync(uint64_t seq) override;
  absl::Status failure() const override;
  using StateStore::Compact;
  absl::Status Compact(const std::function<Snapshot()>& take_snapshot) override;
  uint64_t bytes_since_compact() const override;
  Stats stats() const override;

  // One framed record, as written to the file (for tests that craft journals).
  static std::string Frame(const stoker::v1::StateUpdate& update);

 private:
  struct SyncWait {
    FileJournal* self;
    uint64_t seq;
  };
  static bool SyncDoneOrFree(SyncWait* wait);

  const std::string path_;
  JournalEnv* const env_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::unique_ptr<WritableFile> file_ ABSL_GUARDED_BY(mu_);  // set by Load, replaced by Compact
  std::string pending_ ABSL_GUARDED_BY(mu_);                 // framed records not yet written
  // The sizes of the records in pending_, in order: they are added_ - size() + 1 .. added_.
  std::deque<size_t> pending_sizes_ ABSL_GUARDED_BY(mu_);
  uint64_t added_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t durable_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mu_);  // bytes_written_total and sync_seconds
  // A Sync or Compact is writing outside the lock; the others wait.
  bool syncing_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_JOURNAL_H_
