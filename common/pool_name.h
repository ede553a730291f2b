#ifndef STOKER_COMMON_POOL_NAME_H_
#define STOKER_COMMON_POOL_NAME_H_

// A worker pool's name (a worker's --pool, the coordinator's per-pool prices, a KEDA scaler's
// `pool` metadata): what a Kubernetes label value may be, so a chart can pass a node pool's
// label through. Empty names the default pool.

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace stoker {

inline constexpr size_t kMaxPoolNameBytes = 63;

// INVALID_ARGUMENT starting with `field` when `name` is longer than kMaxPoolNameBytes or holds
// a character other than [A-Za-z0-9._-]. The name itself is not quoted (a peer sent it).
inline absl::Status ValidatePoolName(absl::string_view field, absl::string_view name) {
  if (name.size() > kMaxPoolNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", name.size(), " bytes, over the limit of ", kMaxPoolNameBytes));
  }
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return absl::InvalidArgumentError(absl::StrCat(field, ": only [A-Za-z0-9._-]"));
  }
  return absl::OkStatus();
}

}  // namespace stoker

#endif  // STOKER_COMMON_POOL_NAME_H_
