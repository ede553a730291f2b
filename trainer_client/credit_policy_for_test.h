#ifndef STOKER_TRAINER_CLIENT_CREDIT_POLICY_FOR_TEST_H_
#define STOKER_TRAINER_CLIENT_CREDIT_POLICY_FOR_TEST_H_

// For the credit policy's tests: a budget, the credits a set of grants hands out, a start time.

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "trainer_client/credit_policy.h"

namespace stoker::credit_testing {

inline const absl::Time kT0 = absl::FromUnixSeconds(1000);

inline CreditPolicy::Config Budget(uint64_t batches, bool byte_cap = false) {
  CreditPolicy::Config config;
  config.budget_batches = batches;
  config.byte_cap = byte_cap;
  return config;
}

inline uint64_t Granted(const std::vector<CreditGrant>& grants) {
  uint64_t total = 0;
  for (const CreditGrant& grant : grants) total += grant.credits;
  return total;
}

}  // namespace stoker::credit_testing

#endif  // STOKER_TRAINER_CLIENT_CREDIT_POLICY_FOR_TEST_H_
