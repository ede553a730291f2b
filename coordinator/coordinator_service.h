#ifndef STOKER_COORDINATOR_COORDINATOR_SERVICE_H_
#define STOKER_COORDINATOR_COORDINATOR_SERVICE_H_

// gRPC glue for stoker.v1.Coordinator: each handler calls one Coordinator method and finishes
// the call with its status (absl codes map one-to-one onto gRPC codes). Glue only: this header
// may include grpcpp; logic headers may not.
//
// Handlers never block a gRPC callback thread: each hands its call to a CallExecutor (the
// coordinator's mutex and the journal's fdatasync block), OpenJob to its own pool because it
// may read a dataset (a slow manifest server must not hold up heartbeats), and LeaseTasks to
// its own because it does not wait for the journal (coordinator.h) and must not queue behind
// calls that do. A call that finds kMaxQueuedCalls waiting is answered UNAVAILABLE (retry).

#include <grpcpp/grpcpp.h>

#include "common/tls/grpc_tls.h"
#include "coordinator/call_executor.h"
#include "coordinator/coordinator.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {

// Thread-safe (as Coordinator is). Does not own the coordinator, which must outlive it.
class CoordinatorService final : public stoker::v1::Coordinator::CallbackService {
 public:
  // Threads running the calls other than LeaseTasks and OpenJob, LeaseTasks, and OpenJob; most
  // calls waiting in each.
  //
  // Every handler first checks the caller's role (common/tls/grpc_tls.h; skipped with insecure):
  // RegisterWorker, WorkerHeartbeat and LeaseTasks from workers; OpenJob and ClientHeartbeat from
  // trainers; GetJob from workers and trainers; GetStatus from operators and trainers. A refused
  // call is answered PERMISSION_DENIED or UNAUTHENTICATED naming the method and what was missing.
  static constexpr int kCallThreads = 8;
  static constexpr int kLeaseThreads = 4;
  static constexpr int kOpenJobThreads = 2;
  static constexpr size_t kMaxQueuedCalls = 4096;

  // `tls`: who may call (RoleGate; with insecure every role check passes).
  CoordinatorService(Coordinator* coordinator, const TlsConfig& tls);
  ~CoordinatorService() override;
  // Finishes the queued calls and joins the threads; call after the server's Shutdown. Idempotent.
  void Stop();

  grpc::ServerUnaryReactor* OpenJob(grpc::CallbackServerContext* context,
                                    const stoker::v1::OpenJobRequest* request,
                                    stoker::v1::OpenJobResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const stoker::v1::GetJobRequest* request,
                                   stoker::v1::GetJobResponse* response) override;
  grpc::ServerUnaryReactor* RegisterWorker(grpc::CallbackServerContext* context,
                                           const stoker::v1::RegisterWorkerRequest* request,
                                           stoker::v1::RegisterWorkerResponse* response) override;
  grpc::ServerUnaryReactor* WorkerHeartbeat(grpc::CallbackServerContext* context,
                                            const stoker::v1::WorkerHeartbeatRequest* request,
                                            stoker::v1::WorkerHeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* LeaseTasks(grpc::CallbackServerContext* context,
                                       const stoker::v1::LeaseTasksRequest* request,
                                       stoker::v1::LeaseTasksResponse* response) override;
  grpc::ServerUnaryReactor* ClientHeartbeat(grpc::CallbackServerContext* context,
                                            const stoker::v1::ClientHeartbeatRequest* request,
                                            stoker::v1::ClientHeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const stoker::v1::GetStatusRequest* request,
                                      stoker::v1::GetStatusResponse* response) override;

 private:
  Coordinator* const coordinator_;
  const RoleGate gate_;
  CallExecutor calls_;
  CallExecutor leases_;
  CallExecutor opens_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_SERVICE_H_
