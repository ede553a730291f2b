#ifndef STOKER_COORDINATOR_COORDINATOR_FOR_TEST_H_
#define STOKER_COORDINATOR_COORDINATOR_FOR_TEST_H_

// Settings and calls shared by the tests that drive a Coordinator directly. Tests only.

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/source_factory_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "gtest/gtest.h"

namespace stoker {

// Heartbeats every 500 ms, workers lost after 5 s, leases of 30 s, at most 8 tasks a lease;
// plaintext (logic tests).
inline CoordinatorConfig TestCoordinatorConfig() {
  CoordinatorConfig config;
  config.heartbeat_interval = absl::Milliseconds(500);
  config.worker_timeout = absl::Seconds(5);
  config.lease_duration = absl::Seconds(30);
  config.max_tasks_per_lease = 8;
  config.tls = TlsConfig::Plaintext();
  return config;
}

// Registers a worker at `address`; its id (0 after a failed expectation).
inline uint64_t RegisterTestWorker(Coordinator& coordinator, const std::string& address,
                                   uint32_t cores) {
  stoker::v1::RegisterWorkerRequest request;
  request.set_address(address);
  request.set_cores(cores);
  auto response = coordinator.RegisterWorker(request);
  EXPECT_THAT(response, IsOk());
  return response.ok() ? response->worker_id() : 0;
}

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_FOR_TEST_H_
