#ifndef STOKER_COMMON_ADDRESS_LIST_H_
#define STOKER_COMMON_ADDRESS_LIST_H_

// "HOST:PORT[,HOST:PORT...]": the addresses of one service's replicas, e.g. the coordinators a
// worker or client is given (docs/decisions/0075-follow-the-leader.md).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace stoker {

// `addresses` split into its entries; INVALID_ARGUMENT naming `field` (the flag or option) and
// the entry when one is not host:port (port 1..65535) or the list is empty.
absl::StatusOr<std::vector<std::string>> ParseAddressList(absl::string_view field,
                                                          absl::string_view addresses);

}  // namespace stoker

#endif  // STOKER_COMMON_ADDRESS_LIST_H_
