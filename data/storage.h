#ifndef STOKER_DATA_STORAGE_H_
#define STOKER_DATA_STORAGE_H_

// Random-access reads of one shard file, wherever it lives: a local or shared file system path,
// or an HTTP(S) URL read with range requests (data/http_file.h). Sources see only this interface,
// so tests can run every reader against both.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

// True for "http://..." and "https://..." locations.
bool IsUrl(const std::string& location);

// A URL opens over HTTP (OpenHttpFile), anything else as a local path.
absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenStorage(const std::string& location);

// Reads the whole (small) file at `location`: manifests. Errors as OpenStorage and ReadAt.
absl::StatusOr<std::string> ReadWholeFile(const std::string& location);

}  // namespace stoker

#endif  // STOKER_DATA_STORAGE_H_
