#ifndef STOKER_PACK_CAPTION_TABLE_H_
#define STOKER_PACK_CAPTION_TABLE_H_

// Image-text pairs from a table (stoker-pack --captions-file): a TSV of "path<TAB>caption" lines,
// paths relative to the table's folder unless absolute (as the file list's), the caption the rest
// of the line, stored byte for byte. Empty lines and lines starting with '#' are skipped.
//
// Thread-compatible; immutable once read.

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace stoker {

class Storage;  // data/storage_backend.h

class CaptionTable {
 public:
  // The caption of the image at `path` (as the pack plan names it), or null when not listed.
  const std::string* Find(const std::string& path) const;

 private:
  friend absl::StatusOr<CaptionTable> ReadCaptionTable(const Storage& storage,
                                                       const std::string& location);
  std::map<std::string, std::string> captions_;  // By normalized path.
};

// Reads the table at `location` (a local path or s3:// URL). The storage's errors;
// INVALID_ARGUMENT "LOCATION:LINE: ..." for a line without a tab or a path listed twice.
absl::StatusOr<CaptionTable> ReadCaptionTable(const Storage& storage, const std::string& location);

}  // namespace stoker

#endif  // STOKER_PACK_CAPTION_TABLE_H_
