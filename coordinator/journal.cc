#include "coordinator/journal.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/byte_codec.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;

absl::Status Corrupt(const std::string& path, size_t offset, absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat("journal ", path, ": corrupt record at offset ", offset, " (", why, ")"));
}

// What every Sync answers once a write failed: the coordinator must not reply as if durable.
absl::Status Latched(const absl::Status& first) {
  return absl::Status(first.code(), absl::StrCat(first.message(),
                                                 " (the journal failed and takes no more "
                                                 "writes: restart the coordinator)"));
}

// OK for a (maybe torn) magic of a version this coordinator reads.
absl::Status CheckMagic(const std::string& path, absl::string_view data) {
  constexpr size_t kPrefix = FileJournal::kMagicBytes - 1;  // "STKJRNL", then the version
  const absl::string_view magic(FileJournal::kMagic, kPrefix);
  if (data.substr(0, kPrefix) != magic.substr(0, std::min(data.size(), kPrefix))) {
    return Corrupt(path, 0, "not a stoker journal: bad magic");
  }
  if (data.size() <= kPrefix) return absl::OkStatus();
  const char version = data[kPrefix];
  if (version < FileJournal::kOldestVersion || version > FileJournal::kVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "journal ", path, ": format version '", absl::string_view(&version, 1),
        "' is not one this coordinator reads (", absl::string_view(&FileJournal::kOldestVersion, 1),
        " to ", absl::string_view(&FileJournal::kVersion, 1),
        "); run the coordinator that wrote it, or start on a new journal"));
  }
  return absl::OkStatus();
}

}  // namespace

FileJournal::FileJournal(std::string path, JournalEnv* env, Clock* clock)
    : path_(std::move(path)), env_(env), clock_(clock) {}

FileJournal::~FileJournal() = default;

std::string FileJournal::Frame(const StateUpdate& update) {
  std::string payload;
  update.SerializeToString(&payload);
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  AppendFrameHeader(FrameChecksum::kMaskedLengthAndPayload, AsBytes(payload), &out);
  out += payload;
  return out;
}

absl::StatusOr<std::vector<StateUpdate>> FileJournal::Load() {
  bool exists = false;
  absl::StatusOr<std::string> read = env_->ReadFile(path_, &exists);
  if (!read.ok()) return read.status();
  const std::string data = *std::move(read);
  const std::string magic(kMagic, kMagicBytes);
  RETURN_IF_ERROR(CheckMagic(path_, data));
  std::vector<StateUpdate> updates;
  size_t pos = kMagicBytes;
  while (pos < data.size()) {
    absl::Span<const uint8_t> payload;
    const absl::Status frame = ReadFrame(FrameChecksum::kMaskedLengthAndPayload,
                                         AsBytes(data).subspan(pos), kMaxRecordBytes, &payload);
    if (absl::IsOutOfRange(frame)) break;  // torn header or payload
    if (!frame.ok()) return Corrupt(path_, pos, frame.message());
    StateUpdate& update = updates.emplace_back();
    if (!update.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      return Corrupt(path_, pos, "payload does not parse");
    }
    pos += kHeaderBytes + payload.size();
  }
  if (pos < kMagicBytes || data.size() < kMagicBytes) {
    // New (or torn while being created): write the magic.
    RETURN_IF_ERROR(env_->ReplaceFile(path_, magic));
    pos = kMagicBytes;
  } else if (pos < data.size()) {
    STOKER_LOG(WARNING) << "journal " << path_ << ": torn record at offset " << pos << " ("
                        << data.size() - pos << " bytes dropped); recovered " << updates.size()
                        << " whole records";
    RETURN_IF_ERROR(env_->Truncate(path_, pos));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env_->OpenForAppend(path_));
  absl::MutexLock lock(&mu_);
  file_ = std::move(file);
  bytes_ = pos;
  return updates;
}

uint64_t FileJournal::Add(const StateUpdate& update) {
  std::string framed = Frame(update);
  absl::MutexLock lock(&mu_);
  if (failed_.ok()) {  // a failed journal writes nothing more: buffering would only grow
    pending_ += framed;
    pending_sizes_.push_back(framed.size());
    bytes_ += framed.size();
  }
  return ++added_;
}

absl::Status FileJournal::failure() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

uint64_t FileJournal::last_added() const {
  absl::MutexLock lock(&mu_);
  return added_;
}

uint64_t FileJournal::bytes_since_compact() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

StateStore::Stats FileJournal::stats() const {
  absl::MutexLock lock(&mu_);
  Stats stats = stats_;
  stats.bytes_stored = bytes_;
  stats.failed = !failed_.ok();
  return stats;
}

bool FileJournal::SyncDoneOrFree(SyncWait* wait) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  FileJournal* self = wait->self;
  return !self->failed_.ok() || self->durable_ >= wait->seq || !self->syncing_;
}

absl::Status FileJournal::Sync(uint64_t seq) {
  SyncWait wait{this, seq};
  mu_.Lock();
  mu_.Await(absl::Condition(&SyncDoneOrFree, &wait));
  if (!failed_.ok() || durable_ >= seq) {
    absl::Status status = failed_;
    mu_.Unlock();
    return status;
  }
  // Leader: write everything queued so far, for every waiter.
  syncing_ = true;
  std::string batch;
  batch.swap(pending_);
  pending_sizes_.clear();
  const uint64_t through = added_;
  WritableFile* const file = file_.get();  // replaced only by Compact, which waits for !syncing_
  mu_.Unlock();
  const absl::Time start = clock_->Now();
  absl::Status status =
      file == nullptr
          ? absl::FailedPreconditionError(absl::StrCat("journal ", path_, ": Sync before Load"))
          : file->Append(batch);
  if (status.ok()) status = file->Sync();
  const double seconds = absl::ToDoubleSeconds(clock_->Now() - start);
  mu_.Lock();
  syncing_ = false;
  if (status.ok()) {
    stats_.bytes_written_total += batch.size();
    stats_.sync_seconds.Observe(seconds);
    durable_ = std::max(durable_, through);
  } else {
    STOKER_LOG(ERROR) << status << "; the journal takes no more writes";
    failed_ = Latched(status);
  }
  mu_.Unlock();
  return status;
}

absl::Status FileJournal::Compact(const std::function<Snapshot()>& take_snapshot) {
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](bool* syncing) { return !*syncing; }, &syncing_));
    RETURN_IF_ERROR(failed_);
    syncing_ = true;  // no Sync writes the old file from here on
  }
  // Without the lock: the caller's lock (under which it Adds) may be taken here, and Adds go on
  // while the file is written.
  const Snapshot snapshot = take_snapshot();
  std::string data(kMagic, kMagicBytes);
  data += Frame(snapshot.update);
  absl::Status status = env_->ReplaceFile(path_, data);
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      status.ok() ? env_->OpenForAppend(path_) : status;
  absl::MutexLock lock(&mu_);
  syncing_ = false;
  if (!file.ok()) {
    failed_ = Latched(file.status());
    return file.status();
  }
  file_ = *std::move(file);
  // The queued records the snapshot covers are dropped; the later ones stay for the next Sync.
  const uint64_t first_pending = added_ - pending_sizes_.size() + 1;
  size_t covered_bytes = 0;
  for (uint64_t seq = first_pending; seq <= snapshot.through && !pending_sizes_.empty(); ++seq) {
    covered_bytes += pending_sizes_.front();
    pending_sizes_.pop_front();
  }
  pending_.erase(0, covered_bytes);
  durable_ = std::max(durable_, snapshot.through);
  bytes_ = data.size() + pending_.size();
  return absl::OkStatus();
}

}  // namespace stoker
