#include "common/text_file.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace stoker {

absl::Status WriteTextFile(absl::string_view flag, const std::string& path,
                           absl::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat(flag, ": cannot write ", path));
  return absl::OkStatus();
}

}  // namespace stoker
