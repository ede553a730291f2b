#ifndef STOKER_COORDINATOR_COORDINATOR_CONFIG_H_
#define STOKER_COORDINATOR_COORDINATOR_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/tls/tls_config.h"

namespace stoker {

// Settings of a coordinator. Filled from flags in main.cc (or by tests), then validated.
struct CoordinatorConfig {
  // host:port to serve on; port 0 picks a free port (CoordinatorServer reports it).
  std::string listen_address = "127.0.0.1:0";
  // How often workers heartbeat (told to them in RegisterWorkerResponse), and how often the
  // server checks liveness.
  absl::Duration heartbeat_interval = absl::Milliseconds(500);
  // A worker whose last heartbeat is older than this is removed; its leases return to pending.
  absl::Duration worker_timeout = absl::Seconds(5);
  // How long a worker holds a leased task before it may go to another worker.
  absl::Duration lease_duration = absl::Seconds(30);
  // Most tasks one LeaseTasks call returns, whatever the worker asks for.
  uint32_t max_tasks_per_lease = 64;
  // A job none of whose clients heartbeated (or opened it) for this long is retired, finished
  // or abandoned: a journaled retire_job drops it and workers evict its context. Must be longer
  // than the clients' heartbeat interval.
  absl::Duration job_idle_timeout = absl::Minutes(10);
  // File journal (coordinator/journal.h) of the state that survives a restart; empty = none
  // (state lives in memory only).
  std::string journal_path;
  // Its port's TLS (common/tls/tls_config.h). Plaintext unless set: the binary demands TLS
  // files or an explicit --insecure.
  TlsConfig tls = TlsConfig::Plaintext();

  // INVALID_ARGUMENT naming the field ("worker_timeout: ...") when a setting is unusable:
  // an address without a port, a duration <= 0, a worker_timeout not above
  // heartbeat_interval, max_tasks_per_lease 0, a job_idle_timeout <= 0.
  absl::Status Validate() const;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_CONFIG_H_
