#ifndef STOKER_COMMON_TEXT_FILE_H_
#define STOKER_COMMON_TEXT_FILE_H_

// Small text files named by a flag: a command's output (a trace, a report page), and the
// configuration files a server re-reads when they change (bearer tokens, the tenant policy).

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker {

// Replaces `path` with `text`. UNAVAILABLE "FLAG: cannot write PATH" when it cannot.
absl::Status WriteTextFile(absl::string_view flag, const std::string& path, absl::string_view text);

// The text of `path`. INVALID_ARGUMENT "FLAG: cannot read PATH" when it cannot be read, "FLAG:
// PATH is over N bytes" when it holds more than `max_bytes`.
absl::StatusOr<std::string> ReadTextFile(absl::string_view flag, const std::string& path,
                                         size_t max_bytes);

// "mtime size inode" of `path`, which changes when the file is rewritten or replaced by rename
// (as Kubernetes updates a mounted Secret or ConfigMap); empty when it cannot be stat'ed.
std::string FileVersion(const std::string& path);

}  // namespace stoker

#endif  // STOKER_COMMON_TEXT_FILE_H_
