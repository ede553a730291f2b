#ifndef STOKER_DATA_STORAGE_H_
#define STOKER_DATA_STORAGE_H_

// Data wherever it lives (docs/storage.md): a local or shared file system path, an HTTP(S) URL
// read with range requests (data/http_file.h), or s3://bucket/key in S3 or an S3-compatible
// store (data/s3_client.h), optionally through a worker-local shard cache (data/shard_cache.h).
// Sources see only RandomAccessFile, so every reader runs against all of them. A location with
// a scheme Stoker does not know ("gs://...") is INVALID_ARGUMENT naming the scheme, never a
// relative path.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace stoker {

// Thread-safe: ReadAt may be called concurrently.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  // The path or URL, for messages.
  virtual const std::string& name() const = 0;
  // Size in bytes, known when the file was opened.
  virtual uint64_t size() const = 0;
  // Reads exactly n bytes at `offset` into out[0, n).
  // OUT_OF_RANGE when [offset, offset + n) is not inside the file; UNAVAILABLE on an I/O error
  // worth retrying later (the message names the file).
  virtual absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const = 0;
};

// OK when [offset, offset + n) lies inside a file of `size` bytes; otherwise the OUT_OF_RANGE
// error ReadAt returns, naming `name`.
absl::Status CheckReadRange(const std::string& name, uint64_t size, uint64_t offset, size_t n);

// Opens a local file. NOT_FOUND when it does not exist, PERMISSION_DENIED when it cannot be
// opened, UNAVAILABLE on other errors; messages name the path.
absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenLocalFile(const std::string& path);

enum class StorageScheme { kLocal, kHttp, kS3 };

// The scheme of `location`: "http://" and "https://" kHttp, "s3://" kS3, no "scheme://" prefix
// kLocal. INVALID_ARGUMENT naming the scheme for any other "scheme://".
absl::StatusOr<StorageScheme> SchemeOf(const std::string& location);

// True for a location with any "scheme://" prefix (known or not).
bool IsUrl(const std::string& location);

// How a remote (S3 or HTTP) file is read. kWholeShard: through the shard cache when there is one
// (one download, then local reads). kRanged: straight from the store, a ranged GET per read, for
// random reads over a dataset larger than the cache (docs/storage.md). Local files: no difference.
enum class RemoteReads { kWholeShard, kRanged };

// A file under a listed prefix.
struct StorageEntry {
  std::string location;  // Full path or s3:// URL.
  uint64_t size = 0;
};

// The local halves of WriteWholeFile and ListStorage (data/storage_backend.h). A local write
// replaces the file with Durability::kSynced (common/atomic_file.h).
absl::Status WriteLocalFile(const std::string& path, absl::Span<const uint8_t> data);
absl::StatusOr<std::vector<StorageEntry>> ListLocalFolder(const std::string& dir);

}  // namespace stoker

#endif  // STOKER_DATA_STORAGE_H_
