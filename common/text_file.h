#ifndef STOKER_COMMON_TEXT_FILE_H_
#define STOKER_COMMON_TEXT_FILE_H_

// Writes a command's output file (a trace, a report page) named by one of its flags.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace stoker {

// Replaces `path` with `text`. UNAVAILABLE "FLAG: cannot write PATH" when it cannot.
absl::Status WriteTextFile(absl::string_view flag, const std::string& path, absl::string_view text);

}  // namespace stoker

#endif  // STOKER_COMMON_TEXT_FILE_H_
