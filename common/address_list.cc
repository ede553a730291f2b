#include "common/address_list.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace stoker {

absl::StatusOr<std::vector<std::string>> ParseAddressList(absl::string_view field,
                                                          absl::string_view addresses) {
  std::vector<std::string> parsed = absl::StrSplit(addresses, ',');
  for (size_t i = 0; i < parsed.size(); ++i) {
    const std::string& entry = parsed[i];
    const size_t colon = entry.rfind(':');
    uint32_t port = 0;
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(entry.substr(colon + 1), &port) || port == 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": entry ", i + 1, " of '", addresses,
                                                     "' is not host:port: '", entry, "'"));
    }
  }
  return parsed;
}

}  // namespace stoker
