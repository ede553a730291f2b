#include "pack/caption_table.h"

#include <filesystem>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "data/storage_backend.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

std::string Normalized(const std::string& path) { return fs::path(path).lexically_normal(); }

// One row of a captions table: the line it starts on, its path and caption.
struct CaptionRow {
  int line = 0;
  std::string path;
  std::string caption;
};

absl::Status CaptionRowError(const std::string& location, int line, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(location, ":", line, ": ", reason));
}

absl::StatusOr<std::vector<CaptionRow>> TsvCaptionRows(const std::string& location,
                                                       absl::string_view text) {
  std::vector<CaptionRow> rows;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    absl::ConsumeSuffix(&line, "\r");
    if (line.empty() || line.front() == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == absl::string_view::npos || tab == 0) {
      return CaptionRowError(location, number, "expected \"path<TAB>caption\"");
    }
    rows.push_back({number, std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))});
  }
  return rows;
}

// RFC 4180: fields split by commas, rows by LF or CRLF; a field in double quotes holds anything,
// a quote doubled. `line` counts every newline, inside quotes too, so errors name the file's line.
class CaptionCsvReader {
 public:
  CaptionCsvReader(const std::string& location, absl::string_view text)
      : location_(location), text_(text) {}

  absl::StatusOr<std::vector<CaptionRow>> Rows() {
    std::vector<CaptionRow> rows;
    bool first = true;
    // Spreadsheets start their UTF-8 CSV with a byte order mark.
    if (absl::StartsWith(text_, "\xEF\xBB\xBF")) pos_ = 3;
    while (pos_ < text_.size()) {
      if (ConsumeLineEnd()) continue;  // An empty line.
      const int row_line = line_;
      std::vector<std::string> fields;
      do {
        ASSIGN_OR_RETURN(std::string field, Field());
        fields.push_back(std::move(field));
      } while (Consume(','));
      if (pos_ < text_.size() && !ConsumeLineEnd()) {
        return CaptionRowError(location_, line_, "text after a closing quote");
      }
      const bool header = first && fields == std::vector<std::string>{"path", "caption"};
      first = false;
      if (header) continue;
      if (fields.size() == 1) {
        return CaptionRowError(location_, row_line,
                               "missing caption (expected two fields: path,caption)");
      }
      if (fields.size() > 2) {
        return CaptionRowError(location_, row_line,
                               absl::StrCat(fields.size(),
                                            " fields, expected two (path,caption): quote a "
                                            "caption that holds commas"));
      }
      rows.push_back({row_line, std::move(fields[0]), std::move(fields[1])});
    }
    return rows;
  }

 private:
  bool Consume(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool ConsumeLineEnd() {
    if (absl::StartsWith(text_.substr(pos_), "\r\n")) {
      pos_ += 2;
    } else if (!Consume('\n')) {
      return false;
    }
    ++line_;
    return true;
  }

  bool AtFieldEnd() const {
    const absl::string_view rest = text_.substr(pos_);
    return rest.empty() || rest[0] == ',' || rest[0] == '\n' || absl::StartsWith(rest, "\r\n");
  }

  absl::StatusOr<std::string> Field() {
    std::string field;
    if (!Consume('"')) {
      while (!AtFieldEnd()) {
        if (text_[pos_] == '"') {
          return CaptionRowError(location_, line_,
                                 "a quote inside an unquoted field (quote the whole field and "
                                 "double the quote)");
        }
        field += text_[pos_++];
      }
      return field;
    }
    const int opened = line_;
    while (true) {
      if (pos_ >= text_.size()) return CaptionRowError(location_, opened, "unterminated quote");
      const char c = text_[pos_++];
      if (c == '"' && !Consume('"')) return field;  // A closing quote, not a doubled one.
      if (c == '\n') ++line_;
      field += c;
    }
  }

  const std::string& location_;
  const absl::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

absl::StatusOr<CaptionTableFormat> CaptionTableFormatOf(absl::string_view format,
                                                        absl::string_view location) {
  if (format == "tsv") return CaptionTableFormat::kTsv;
  if (format == "csv") return CaptionTableFormat::kCsv;
  if (!format.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "captions_format: must be csv or tsv (empty: by the file's extension), got ", format));
  }
  return absl::EndsWithIgnoreCase(location, ".csv") ? CaptionTableFormat::kCsv
                                                    : CaptionTableFormat::kTsv;
}

const std::string* CaptionTable::Find(const std::string& path) const {
  const auto it = captions_.find(Normalized(path));
  return it == captions_.end() ? nullptr : &it->second.caption;
}

absl::Status CaptionTable::CheckListedAmong(const std::vector<std::string>& paths) const {
  std::set<std::string> known;
  for (const std::string& path : paths) known.insert(Normalized(path));
  const Entry* first = nullptr;
  for (const auto& [key, entry] : captions_) {
    if (known.count(key) == 0 && (first == nullptr || entry.line < first->line)) first = &entry;
  }
  if (first == nullptr) return absl::OkStatus();
  return CaptionRowError(location_, first->line,
                         absl::StrCat("unknown image ", first->written, " (not among the inputs)"));
}

absl::StatusOr<CaptionTable> ReadCaptionTable(const Storage& storage, const std::string& location,
                                              CaptionTableFormat format) {
  ASSIGN_OR_RETURN(const std::string text, storage.ReadAll(location));
  std::vector<CaptionRow> rows;
  if (format == CaptionTableFormat::kCsv) {
    ASSIGN_OR_RETURN(rows, CaptionCsvReader(location, text).Rows());
  } else {
    ASSIGN_OR_RETURN(rows, TsvCaptionRows(location, text));
  }
  const fs::path base = fs::path(location).parent_path();
  CaptionTable table;
  table.location_ = location;
  for (CaptionRow& row : rows) {
    if (row.path.empty()) return CaptionRowError(location, row.line, "empty path");
    const fs::path path(row.path);
    const std::string key = Normalized(path.is_absolute() ? path.string() : (base / path).string());
    if (!table.captions_
             .emplace(key, CaptionTable::Entry{std::move(row.caption), row.line, row.path})
             .second) {
      return CaptionRowError(location, row.line, absl::StrCat(row.path, " is listed twice"));
    }
  }
  return table;
}

}  // namespace stoker
