#ifndef STOKER_PACK_CAPTION_TABLE_H_
#define STOKER_PACK_CAPTION_TABLE_H_

// Image-text pairs from a table (stoker-pack --captions-file), paths relative to the table's
// folder unless absolute (as the file list's), captions stored byte for byte. Two formats:
//   TSV  "path<TAB>caption" lines, the caption the rest of the line; empty lines and lines
//        starting with '#' are skipped.
//   CSV  RFC 4180 rows of two fields, path and caption: a field in double quotes may hold
//        commas, newlines and doubled quotes (""); CRLF or LF line ends; empty lines skipped.
//        A first row of exactly `path,caption` is a header and skipped; no header is needed.
//        A leading UTF-8 byte order mark (spreadsheets write one) is skipped.
// Every bad row is refused naming the table, the line and the reason.
//
// Thread-compatible; immutable once read.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker {

class Storage;  // data/storage_backend.h

enum class CaptionTableFormat { kTsv, kCsv };

// The format `format` names ("tsv", "csv"), or for "" the one `location`'s extension names
// (".csv": CSV, anything else: TSV). INVALID_ARGUMENT naming captions_format otherwise.
absl::StatusOr<CaptionTableFormat> CaptionTableFormatOf(absl::string_view format,
                                                        absl::string_view location);

class CaptionTable {
 public:
  // The caption of the image at `path` (as the pack plan names it), or null when not listed.
  const std::string* Find(const std::string& path) const;

  // OK when every listed image is one of `paths` (the pack plan's inputs); else
  // INVALID_ARGUMENT "LOCATION:LINE: unknown image PATH (not among the inputs)" for the first
  // listed one that is not.
  absl::Status CheckListedAmong(const std::vector<std::string>& paths) const;

 private:
  friend absl::StatusOr<CaptionTable> ReadCaptionTable(const Storage& storage,
                                                       const std::string& location,
                                                       CaptionTableFormat format);
  struct Entry {
    std::string caption;
    int line = 0;
    std::string written;  // The path as the table writes it.
  };
  std::string location_;
  std::map<std::string, Entry> captions_;  // By normalized path.
};

// Reads the table at `location` (a local path or s3:// URL) in `format`. The storage's errors;
// INVALID_ARGUMENT "LOCATION:LINE: REASON" for a bad row: a TSV line without a tab, a CSV row
// with an unterminated quote, a stray quote, one field (missing caption) or more than two, an
// empty path, a path listed twice.
absl::StatusOr<CaptionTable> ReadCaptionTable(const Storage& storage, const std::string& location,
                                              CaptionTableFormat format);

}  // namespace stoker

#endif  // STOKER_PACK_CAPTION_TABLE_H_
