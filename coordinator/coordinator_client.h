#ifndef STOKER_COORDINATOR_COORDINATOR_CLIENT_H_
#define STOKER_COORDINATOR_COORDINATOR_CLIENT_H_

// The one client of the Coordinator service (proto/stoker/v1/coordinator.proto) that the
// worker, the trainer client and stoker-ctl share: an interface that their logic sees (never
// gRPC), and one gRPC implementation (grpc_coordinator_client.cc) over a keepalive channel in
// which every call has a deadline.
//
// Errors keep the coordinator's status code; their message starts with "coordinator
// <address>: ". UNAVAILABLE / DEADLINE_EXCEEDED: not reachable (retry); NOT_FOUND: an unknown
// job or worker of this coordinator; FAILED_PRECONDITION: an id of another coordinator
// incarnation (common/ids.h), never to retry with; INVALID_ARGUMENT names the bad field.
//
// Replicated coordinators (docs/decisions/0075-follow-the-leader.md): the gRPC client takes every
// replica's address and follows the leader; it refuses a response whose coordinator_epoch is
// lower than one it has seen (a deposed leader), UNAVAILABLE, counted in stale_epoch_responses().
//
// Each method has a default that answers UNIMPLEMENTED, so a test fake overrides only the calls
// its role makes (the trainer client's FakeCoordinator: OpenJob and ClientHeartbeat).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls/tls_config.h"
#include "stoker/v1/coordinator.pb.h"

namespace stoker {

// ClientHeartbeatRequest.overdue: the coordinator looks at the first kMaxOverdueTasks; a client
// sends no more.
inline constexpr int kMaxOverdueTasks = 64;

// Implementations are thread-safe.
class CoordinatorClient {
 public:
  virtual ~CoordinatorClient() = default;

  // Trainer client.
  virtual absl::StatusOr<stoker::v1::OpenJobResponse> OpenJob(
      const stoker::v1::OpenJobRequest& request) {
    return Unimplemented("OpenJob");
  }
  virtual absl::StatusOr<stoker::v1::ClientHeartbeatResponse> ClientHeartbeat(
      const stoker::v1::ClientHeartbeatRequest& request) {
    return Unimplemented("ClientHeartbeat");
  }
  // Worker.
  virtual absl::StatusOr<stoker::v1::RegisterWorkerResponse> RegisterWorker(
      const stoker::v1::RegisterWorkerRequest& request) {
    return Unimplemented("RegisterWorker");
  }
  virtual absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> WorkerHeartbeat(
      const stoker::v1::WorkerHeartbeatRequest& request) {
    return Unimplemented("WorkerHeartbeat");
  }
  virtual absl::StatusOr<stoker::v1::LeaseTasksResponse> LeaseTasks(
      const stoker::v1::LeaseTasksRequest& request) {
    return Unimplemented("LeaseTasks");
  }
  virtual absl::StatusOr<stoker::v1::GetJobResponse> GetJob(
      const stoker::v1::GetJobRequest& request) {
    return Unimplemented("GetJob");
  }
  // Operator (stoker-ctl).
  virtual absl::StatusOr<stoker::v1::GetStatusResponse> GetStatus(
      const stoker::v1::GetStatusRequest& request) {
    return Unimplemented("GetStatus");
  }
  // Operator and trainer (stoker-ctl trace, Loader.trace; coordinator/coordinator_trace_client.h).
  virtual absl::StatusOr<stoker::v1::StartTraceResponse> StartTrace(
      const stoker::v1::StartTraceRequest& request) {
    return Unimplemented("StartTrace");
  }
  virtual absl::StatusOr<stoker::v1::GetTraceResponse> GetTrace(
      const stoker::v1::GetTraceRequest& request) {
    return Unimplemented("GetTrace");
  }
  // Cancels the calls in flight and fails later ones with CANCELLED, so that a stopping process
  // does not wait out a deadline on a coordinator that is itself shutting down.
  virtual void Shutdown() {}
  // Responses refused for an epoch older than one already seen (a deposed leader's).
  virtual uint64_t stale_epoch_responses() const { return 0; }

 private:
  static absl::Status Unimplemented(const char* method) {
    return absl::UnimplementedError(std::string(method) + ": not implemented by this client");
  }
};

// The help text of every --coordinator flag (worker, stoker-ctl, the bench client).
inline constexpr char kCoordinatorFlagHelp[] =
    "host:port of the coordinator, or HOST:PORT,HOST:PORT... of its replicas (calls follow the "
    "leader)";

// A gRPC client of `addresses` ("HOST:PORT[,HOST:PORT...]", one channel each, client keepalive)
// secured by `tls` (the coordinator's certificate must name role coordinator;
// common/tls/grpc_tls.h); every call has deadline `rpc_timeout`. Calls go to the address that
// last answered; an UNAVAILABLE answer (a standby, a dead replica, a deposed leader) is retried at
// once on the next candidate within the same call and deadline, each address at most once: the
// leader a standby names (metadata stoker-leader) when it is one of `addresses`, else the next
// in the list. DEADLINE_EXCEEDED moves later calls on the same way.
// REQUIRES: tls.Validate() is OK and ParseAddressList (common/address_list.h) accepts
// `addresses`.
std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(const std::string& addresses,
                                                            absl::Duration rpc_timeout,
                                                            const TlsConfig& tls);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_CLIENT_H_
