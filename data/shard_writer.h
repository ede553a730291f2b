#ifndef STOKER_DATA_SHARD_WRITER_H_
#define STOKER_DATA_SHARD_WRITER_H_

// Writes one stoker shard (data/shard_format.h): Create, Add records, Finish. The file at `path`
// is complete only after Finish() returns OK (flushed and closed, not yet synced); callers that
// list shards in a manifest write to a temporary name and move it into place after Finish with
// CommitReplacement (common/atomic_file.h), which syncs it (pack/).

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace stoker {

// Thread-compatible.
class ShardWriter {
 public:
  // UNAVAILABLE (naming the path) when the file cannot be created.
  static absl::StatusOr<std::unique_ptr<ShardWriter>> Create(const std::string& path);
  ~ShardWriter();

  // INVALID_ARGUMENT when the key is longer than 65535 bytes or the record over 1 GiB;
  // UNAVAILABLE on a write error; FAILED_PRECONDITION after Finish.
  absl::Status Add(absl::string_view key, int64_t label, absl::Span<const uint8_t> data,
                   absl::string_view metadata = "");
  // Writes the index and trailer, flushes and closes. UNAVAILABLE on a write error.
  absl::Status Finish();

  uint64_t records() const { return index_.size(); }
  uint64_t bytes_written() const { return offset_; }

 private:
  ShardWriter(std::string path, std::FILE* file);
  absl::Status Write(const void* data, size_t n);

  struct Entry {
    uint64_t offset;
    uint32_t length;
  };
  const std::string path_;
  std::FILE* file_;
  uint64_t offset_ = 0;
  std::vector<Entry> index_;
  std::vector<uint8_t> body_;
};

}  // namespace stoker

#endif  // STOKER_DATA_SHARD_WRITER_H_
