#ifndef STOKER_COORDINATOR_FAKE_JOURNAL_ENV_FOR_TEST_H_
#define STOKER_COORDINATOR_FAKE_JOURNAL_ENV_FOR_TEST_H_

// An in-memory JournalEnv (journal_env.h) that injects the faults a disk has: a failing
// fdatasync, a short write (the process dies mid-append: part of the data is in the file) and
// a full disk. Tests only.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/journal_env.h"

namespace stoker {

// Thread-safe.
class FakeJournalEnv : public JournalEnv {
 public:
  // The next Sync of any file fails with `error`.
  void FailNextSync(absl::Status error) {
    absl::MutexLock lock(&mu_);
    sync_error_ = std::move(error);
  }
  // The next Append writes only its first `keep` bytes, then fails (INTERNAL).
  void ShortWriteNext(size_t keep) {
    absl::MutexLock lock(&mu_);
    short_write_ = keep;
  }
  // Every ReplaceFile (a compaction) first runs `hook`, outside the env's lock: a test holds a
  // compaction mid-write there.
  void SetReplaceHook(std::function<void()> hook) {
    absl::MutexLock lock(&mu_);
    replace_hook_ = std::move(hook);
  }
  // Every Sync first runs `hook`, outside the env's lock: a test advances its clock there (a
  // slow fdatasync).
  void SetSyncHook(std::function<void()> hook) {
    absl::MutexLock lock(&mu_);
    sync_hook_ = std::move(hook);
  }
  // Writes that would make the files hold more than `bytes` in all fail with ENOSPC's error.
  void SetDiskBytes(size_t bytes) {
    absl::MutexLock lock(&mu_);
    disk_bytes_ = bytes;
  }
  std::string Contents(const std::string& path) {
    absl::MutexLock lock(&mu_);
    return files_[path];
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path, bool* exists) override {
    absl::MutexLock lock(&mu_);
    auto it = files_.find(path);
    *exists = it != files_.end();
    return *exists ? it->second : std::string();
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path) override {
    absl::MutexLock lock(&mu_);
    if (files_.count(path) == 0) {
      return absl::InternalError(absl::StrCat("journal ", path, ": open for append: no such file"));
    }
    return std::unique_ptr<WritableFile>(new File(this, path));
  }
  absl::Status Truncate(const std::string& path, size_t size) override {
    absl::MutexLock lock(&mu_);
    files_[path].resize(std::min(size, files_[path].size()));
    return absl::OkStatus();
  }
  absl::Status ReplaceFile(const std::string& path, absl::string_view data) override {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&mu_);
      hook = replace_hook_;
    }
    if (hook) hook();
    absl::MutexLock lock(&mu_);
    if (UsedLocked() - files_[path].size() + data.size() > disk_bytes_) return DiskFull(path);
    files_[path] = std::string(data);
    return absl::OkStatus();
  }

 private:
  class File : public WritableFile {
   public:
    File(FakeJournalEnv* env, std::string path) : env_(env), path_(std::move(path)) {}
    absl::Status Append(absl::string_view data) override { return env_->Append(path_, data); }
    absl::Status Sync() override { return env_->Sync(); }

   private:
    FakeJournalEnv* const env_;
    const std::string path_;
  };

  absl::Status Append(const std::string& path, absl::string_view data) {
    absl::MutexLock lock(&mu_);
    if (short_write_.has_value()) {
      absl::StrAppend(&files_[path], data.substr(0, *short_write_));
      short_write_.reset();
      return absl::InternalError(absl::StrCat("journal ", path, ": write: short write"));
    }
    if (UsedLocked() + data.size() > disk_bytes_) return DiskFull(path);
    absl::StrAppend(&files_[path], data);
    return absl::OkStatus();
  }
  absl::Status Sync() {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&mu_);
      hook = sync_hook_;
    }
    if (hook) hook();
    absl::MutexLock lock(&mu_);
    return std::exchange(sync_error_, absl::OkStatus());
  }
  size_t UsedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t used = 0;
    for (const auto& [name, data] : files_) used += data.size();
    return used;
  }
  static absl::Status DiskFull(const std::string& path) {
    return absl::ResourceExhaustedError(
        absl::StrCat("journal ", path, ": write: No space left on device"));
  }

  absl::Mutex mu_;
  std::map<std::string, std::string> files_ ABSL_GUARDED_BY(mu_);
  absl::Status sync_error_ ABSL_GUARDED_BY(mu_);
  std::optional<size_t> short_write_ ABSL_GUARDED_BY(mu_);
  size_t disk_bytes_ ABSL_GUARDED_BY(mu_) = SIZE_MAX;
  std::function<void()> replace_hook_ ABSL_GUARDED_BY(mu_);
  std::function<void()> sync_hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_FAKE_JOURNAL_ENV_FOR_TEST_H_
