#ifndef STOKER_COORDINATOR_COORDINATOR_SERVER_H_
#define STOKER_COORDINATOR_COORDINATOR_SERVER_H_

// A running coordinator: the gRPC server (stoker.v1.Coordinator, KEDA's
// externalscaler.ExternalScaler and grpc.health.v1.Health) plus
// a liveness thread that removes silent workers and expires leases every heartbeat_interval.
// Health is SERVING once the journal is replayed, and NOT_SERVING from the liveness thread's
// first round after the journal failed (Coordinator::StoreUsable), so that probes restart it.
// Replicated (docs/decisions/0075-follow-the-leader.md), a replica that does not lead answers
// every call UNAVAILABLE naming the leader and health NOT_SERVING; a watcher thread re-reads the
// Leadership every kLeadershipPoll, so health follows a takeover within that.
// What main.cc, TestCluster and tests start:
//
//   ASSIGN_OR_RETURN(auto server, CoordinatorServer::Start(config, io));
//   dial(server->address());   // "127.0.0.1:<bound port>"
//   server->Stop();            // or let the destructor do it
//
// The header is free of grpcpp (the server lives behind a pimpl).

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "coordinator/call_latencies.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/journal_env.h"
#include "coordinator/leadership.h"
#include "data/dataset_io.h"

namespace stoker {

// Thread-safe.
class CoordinatorServer {
 public:
  // Validates `config` (INVALID_ARGUMENT naming the field), binds config.listen_address (port 0
  // picks a free one) and starts serving. UNAVAILABLE naming the address when it cannot bind.
  // Jobs' datasets are read through `io` (main.cc builds it from the storage flags).
  // `clock` drives liveness and leases and times the calls and the journal's syncs;
  // `journal_env` holds the journal (config.journal_path); `leadership` says whether this
  // replica serves and under which epoch (leadership.h). All three must outlive the server.
  //
  // With config.state (etcd), the server is one replica of several: it loads the state from
  // etcd once serving (errors as EtcdReplication::Start: the server does not start), answers as
  // a standby until it wins the election, and `leadership` is unused (the replica is the
  // leadership). `on_deposed` runs when it stops leading (coordinator_replica.h); by default
  // the replica only stops serving.
  static absl::StatusOr<std::unique_ptr<CoordinatorServer>> Start(
      const CoordinatorConfig& config, DatasetIo io, Clock* clock = Clock::Real(),
      JournalEnv* journal_env = PosixJournalEnv(), Leadership* leadership = SoleLeadership(),
      std::function<void(const absl::Status&)> on_deposed = {});

  static constexpr absl::Duration kLeadershipPoll = absl::Milliseconds(50);

  ~CoordinatorServer();
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  // The bound port.
  int port() const;
  // Where clients on this host dial: the listen host (127.0.0.1 for a wildcard host) and the
  // bound port.
  std::string address() const;
  Coordinator* coordinator();
  // Whether this replica serves now (always, but for a standby of replicated coordinators).
  bool leading() const;
  // What says so: the replica's election with config.state, else the one Start was given.
  const Leadership* leadership() const;
  // Per-method time from handler entry to reply (call_latencies.h).
  const CallLatencies* call_latencies() const;

  // Stops serving (in-flight calls get a few seconds) and joins the liveness thread.
  // Idempotent; also called by the destructor.
  void Stop();

 private:
  struct Impl;
  explicit CoordinatorServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_SERVER_H_
