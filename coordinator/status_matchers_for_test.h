#ifndef STOKER_COORDINATOR_STATUS_MATCHERS_FOR_TEST_H_
#define STOKER_COORDINATOR_STATUS_MATCHERS_FOR_TEST_H_

// StatusIs(code, message_matcher) for absl::Status and absl::StatusOr<T>, as Abseil's own
// status_matchers (newer than Debian's Abseil). Tests only.

#include <gmock/gmock.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace stoker {
namespace testing_internal {

inline const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace testing_internal

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + absl::StatusCodeToString(code) + " and a matching message") {
  const absl::Status& status = testing_internal::StatusOf(arg);
  *result_listener << "status is " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(status.message()),
                                       result_listener);
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = testing_internal::StatusOf(arg);
  *result_listener << "status is " << status;
  return status.ok();
}

}  // namespace stoker

#endif  // STOKER_COORDINATOR_STATUS_MATCHERS_FOR_TEST_H_
