#ifndef STOKER_COMMON_STATUS_MACROS_H_
#define STOKER_COMMON_STATUS_MACROS_H_

// RETURN_IF_ERROR and ASSIGN_OR_RETURN: Debian's Abseil (20220623) predates Abseil's own.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#define STOKER_CONCAT_INNER_(a, b) a##b
#define STOKER_CONCAT_(a, b) STOKER_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing function when not OK.
#define RETURN_IF_ERROR(expr)                           \
  do {                                                  \
    ::absl::Status stoker_status_ = (expr);             \
    if (!stoker_status_.ok()) return stoker_status_;    \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` declares/assigns x from an absl::StatusOr<T>, returning the
// error status from the enclosing function when it is not OK.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  STOKER_ASSIGN_OR_RETURN_IMPL_(STOKER_CONCAT_(stoker_statusor_, __LINE__), lhs, rexpr)

#define STOKER_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

namespace stoker {

// `status` with `prefix` put before its message; code and payloads (e.g. a bad-sample reason,
// common/bad_sample.h) are kept. OK stays OK.
inline absl::Status PrefixStatus(absl::string_view prefix, const absl::Status& status) {
  if (status.ok()) return status;
  absl::Status prefixed(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&prefixed](absl::string_view url, const absl::Cord& payload) {
    prefixed.SetPayload(url, payload);
  });
  return prefixed;
}

}  // namespace stoker

#endif  // STOKER_COMMON_STATUS_MACROS_H_
