#ifndef STOKER_COORDINATOR_COORDINATOR_SERVICE_H_
#define STOKER_COORDINATOR_COORDINATOR_SERVICE_H_

// gRPC glue for stoker.v1.Coordinator: each handler calls one Coordinator method and finishes
// the call with its status (absl codes map one-to-one onto gRPC codes). Glue only: this header
// may include grpcpp; logic headers may not.
//
// Handlers never block a gRPC callback thread: each hands its call to a CallExecutor (the
// coordinator's mutex and the journal's fdatasync block), OpenJob to its own pool because it
// may read a dataset (a slow manifest server must not hold up heartbeats). LeaseTasks does not
// wait for the journal (coordinator.h), so it runs on the callback thread itself when the
// coordinator's mutex is free (TryLock: no wait, and no hand-off to another thread, the common
// case); when the mutex is held, or its reply must wait for the journal (rank_finished), it
// goes to its own pool, where it does not queue behind calls that wait for the journal. A call
// that finds kMaxQueuedCalls waiting is answered UNAVAILABLE (retry).
// Every call's time from handler entry to Finish goes into CallLatencies (call_latencies.h).

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <optional>

#include "common/clock.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/call_executor.h"
#include "coordinator/call_latencies.h"
#include "coordinator/coordinator.h"
#include "coordinator/leader_gate.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {

// Thread-safe (as Coordinator is). Does not own the coordinator or the latencies, which must
// outlive it.
class CoordinatorService final : public stoker::v1::Coordinator::CallbackService {
 public:
  // Threads running the calls other than LeaseTasks and OpenJob, LeaseTasks, and OpenJob; most
  // calls waiting in each.
  //
  // Every handler first checks the caller's role (common/tls/grpc_tls.h; skipped with insecure):
  // RegisterWorker, WorkerHeartbeat and LeaseTasks from workers; OpenJob and ClientHeartbeat from
  // trainers; GetJob from workers and trainers; GetStatus from operators and trainers;
  // StartTrace and GetTrace from operators and trainers (Loader.trace). A refused call is
  // answered PERMISSION_DENIED or UNAUTHENTICATED naming the method and what was missing. The
  // caller's tenant (common/tls/principal.h) scopes what a trainer sees: its own tenant's jobs.
  // Then `leader` (leader_gate.h): a standby answers UNAVAILABLE naming the leader; a leader
  // stamps its epoch on the responses that have coordinator_epoch.
  //
  // The calls pool's threads wait for the store's group commit only in the calls that block
  // (RegisterWorker, GetJob, GetStatus): the heartbeats hand their reply to the store
  // (StateStore::SyncThen), whose writer finishes them. A file journal commits in ~1 ms; etcd
  // (a raft round and two fsyncs) in 3-6 ms, so a coordinator on etcd keeps kEtcdCallThreads for
  // a burst of registrations (docs/benchmarks/control-plane.md).
  static constexpr int kCallThreads = 8;
  static constexpr int kEtcdCallThreads = 16;
  static constexpr int kLeaseThreads = 4;
  static constexpr int kOpenJobThreads = 2;
  static constexpr size_t kMaxQueuedCalls = 4096;
  // Calls started and not yet answered, most of them waiting for the store's commit with their
  // response built (a ClientHeartbeat's lists every worker: ~35 KB for 1,000); one more is
  // answered UNAVAILABLE.
  static constexpr int64_t kMaxStartedCalls = 1024;

  // `tls`: who may call (RoleGate; with insecure every role check passes). Each call's latency is
  // observed in `latencies`, timed with `clock`; `leader` says whether to answer. All three
  // outlive the service.
  // `call_threads` runs the calls other than LeaseTasks and OpenJob.
  CoordinatorService(Coordinator* coordinator, CallLatencies* latencies, const TlsConfig& tls,
                     Clock* clock, const LeaderGate* leader, int call_threads = kCallThreads);
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
  grpc::ServerUnaryReactor* StartTrace(grpc::CallbackServerContext* context,
                                       const stoker::v1::StartTraceRequest* request,
                                       stoker::v1::StartTraceResponse* response) override;
  grpc::ServerUnaryReactor* GetTrace(grpc::CallbackServerContext* context,
                                     const stoker::v1::GetTraceRequest* request,
                                     stoker::v1::GetTraceResponse* response) override;

 private:
  using LeaseTasksResponse = stoker::v1::LeaseTasksResponse;
  struct Finisher;
  struct Admitted;
  // Starts the clock of a call, checks the caller's role, then that this replica leads: the
  // call's finisher, the caller's tenant scope and the epoch to stamp, or nullopt when the call
  // was refused (and finished). `reactor` is the
  // context's DefaultReactor(), which a handler must get once only (each call of it resets the
  // reactor).
  std::optional<Admitted> Admit(const char* method, std::initializer_list<Role> allowed,
                                grpc::CallbackServerContext* context,
                                grpc::ServerUnaryReactor* reactor);
  // Runs `start(done)` (which may block: the coordinator's mutex, the journal's sync, dataset
  // I/O) on `executor`; `done` (Coordinator::Then, called there or later on the store's thread)
  // finishes the gRPC call with its result: on success its value becomes the response, stamped
  // with `epoch`. UNAVAILABLE at once when the executor has too many calls waiting.
  template <typename Response, typename Start>
  void Schedule(CallExecutor* executor, const Finisher& finish, uint64_t epoch, Response* response,
                Start start);
  // Admit, then Schedule `start(scope, done)`. The callback thread returns at once.
  template <typename Response, typename Start>
  grpc::ServerUnaryReactor* ReplyThen(const char* method, std::initializer_list<Role> allowed,
                                      CallExecutor* executor, grpc::CallbackServerContext* context,
                                      Response* response, Start start);
  // ReplyThen for a `call(scope)` that returns its result.
  template <typename Response, typename Call>
  grpc::ServerUnaryReactor* Reply(const char* method, std::initializer_list<Role> allowed,
                                  CallExecutor* executor, grpc::CallbackServerContext* context,
                                  Response* response, Call call);

  Coordinator* const coordinator_;
  CallLatencies* const latencies_;
  Clock* const clock_;
  const RoleGate gate_;
  const LeaderGate* const leader_;
  std::atomic<int64_t> started_{0};  // see kMaxStartedCalls
  CallExecutor calls_;
  CallExecutor leases_;
  CallExecutor opens_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_SERVICE_H_
