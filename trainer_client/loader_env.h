#ifndef STOKER_TRAINER_CLIENT_LOADER_ENV_H_
#define STOKER_TRAINER_CLIENT_LOADER_ENV_H_

// The Loader's environment, injectable for tests (DESIGN §8.4). Every null member gets the real
// implementation: gRPC to LoaderOptions::coordinator_address, gRPC worker streams, the wall clock.

#include <memory>

#include "common/clock.h"
#include "coordinator/coordinator_client.h"
#include "trainer_client/worker_stream.h"

namespace stoker {

struct LoaderEnv {
  std::shared_ptr<CoordinatorClient> coordinator;
  std::shared_ptr<WorkerStreamFactory> worker_streams;
  // Used for backoff sleeps, reconnect delays, stall escalation and the wait/step statistics.
  // Waits that Stop() must interrupt (the heartbeat period) use real time.
  Clock* clock = nullptr;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_ENV_H_
