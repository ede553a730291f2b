#include "pack/caption_table.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "data/storage_backend.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

std::string Normalized(const std::string& path) { return fs::path(path).lexically_normal(); }

}  // namespace

const std::string* CaptionTable::Find(const std::string& path) const {
  const auto it = captions_.find(Normalized(path));
  return it == captions_.end() ? nullptr : &it->second;
}

absl::StatusOr<CaptionTable> ReadCaptionTable(const Storage& storage, const std::string& location) {
  ASSIGN_OR_RETURN(const std::string text, storage.ReadAll(location));
  const fs::path base = fs::path(location).parent_path();
  CaptionTable table;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    absl::ConsumeSuffix(&line, "\r");
    if (line.empty() || line.front() == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == absl::string_view::npos || tab == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(location, ":", number, ": expected \"path<TAB>caption\""));
    }
    const fs::path path(std::string(line.substr(0, tab)));
    const std::string key = Normalized(path.is_absolute() ? path.string() : (base / path).string());
    if (!table.captions_.emplace(key, std::string(line.substr(tab + 1))).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(location, ":", number, ": ", path.string(), " is listed twice"));
    }
  }
  return table;
}

}  // namespace stoker
